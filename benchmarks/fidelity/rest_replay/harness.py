"""Replay seeded call sequences on a real REST backend and on Gecko; the figures per class (`measures`).

Per sequence: the backend is emptied through its API, the sequence's seed records are created on it, and a new
Gecko session starts with exactly those records (ids included) in its state; then every call goes to both (an
invalid call only to Gecko when the backend does not validate: it would store what its document forbids). After
each call Gecko's session state is read, so answers can be checked against what Gecko itself holds; at the end
each collection is listed on both sides and compared record by record.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks.fidelity.rest_replay.backends import BACKENDS, Backend, empty, running
from benchmarks.fidelity.rest_replay.calls import Ref, Sequence, SequenceMaker
from benchmarks.fidelity.rest_replay.contract import Resource, resources
from benchmarks.fidelity.rest_replay.measures import Tally
from benchmarks.fidelity.rest_replay.replay import GeckoSide, Side
from utils.procs import gecko_server

TIMEOUT = 30.0
"""Seconds any one request may take (a replay never waits longer on a hung server)."""


@dataclass(frozen=True)
class ReplayConfig:
    """One run: a backend and the document that describes it, how many sequences of how many calls."""

    backend: str
    document: Path
    npm_dir: Path
    sequences: int = 200
    calls: int = 20
    seed: int = 0
    gecko_url: str | None = None
    """A running Gecko that loaded `document` (None: start one with 2 workers, rules engines)."""
    workers: int = 2


@contextmanager
def _gecko(config: ReplayConfig) -> Iterator[str]:
    if config.gecko_url is not None:
        yield config.gecko_url
        return
    with tempfile.TemporaryDirectory(prefix="rest-replay-gecko-") as state, \
            gecko_server([config.document.parent], workers=config.workers, state_dir=Path(state),
                         log_path=Path(state) / "server.log") as url:
        yield url


def _seed(real: Side, sequence: Sequence, by_name: Mapping[str, Resource]) -> dict[str, dict[str, Any]]:
    """Create the seed records on the real server; the same records (its ids) for Gecko's state."""
    held: dict[str, dict[str, Any]] = {name: {} for name in by_name}
    counts = dict.fromkeys(by_name, 0)
    for name, body in sequence.seed:
        res = by_name[name]
        sent = {k: real.resolve(v) if isinstance(v, Ref) else v for k, v in body.items()}
        response = real.client.post(res.path, json=sent)
        response.raise_for_status()
        time.sleep(real.create_gap)
        record = response.json()
        real.record_id(name, counts[name], record[res.id_field])
        counts[name] += 1
        held[name][str(record[res.id_field])] = record
    return held


def _normal(side: Side, res: Resource, record: Mapping[str, Any]) -> dict[str, Any]:
    """A record with its id dropped and link fields as creation indexes (comparable across sides)."""
    out = {}
    for key, value in record.items():
        if key == res.id_field:
            continue
        if key in res.links:
            index = side.index_of(res.links[key], value)
            value = f"#{index}" if index is not None else f"?{value}"
        out[key] = value
    return out


def _final(tally: Tally, real: Side, gecko: GeckoSide, by_name: Mapping[str, Resource],
           sent_keys: Mapping[tuple[str, int], set[str]], number: int) -> None:
    """Compare the end states: the real server's lists against Gecko's state; Gecko's lists against its state."""
    held = gecko.state()
    agree = True
    for name, res in by_name.items():
        listed = gecko.listing(res)
        items = listed if isinstance(listed, list) else None
        same_list = items is not None and len(items) == len(held[name]) and all(
            isinstance(i, Mapping) and held[name].get(str(i.get(res.id_field))) == i for i in items)
        if not tally.own_list_vs_state.add(same_list):
            tally.example("own_list_vs_state", f"sequence {number} {name}: lists {str(items)[:150]}, "
                          f"holds {str(list(held[name].values()))[:150]}")
        real_records = {real.index_of(name, r[res.id_field]): r for r in (real.listing(res) or [])}
        gecko_records = {gecko.index_of(name, r.get(res.id_field)): r for r in held[name].values()}
        if set(real_records) != set(gecko_records):
            agree = False
            tally.example("final_state", f"sequence {number} {name}: real holds #{sorted(real_records, key=str)}, "
                          f"gecko #{sorted(gecko_records, key=str)}")
            continue
        for index, record in real_records.items():
            mine, theirs = _normal(real, res, record), _normal(gecko, res, gecko_records[index])
            sent = sent_keys.get((name, index), set()) if index is not None else set()
            if set(mine) != set(theirs) or any(mine[k] != theirs[k] for k in sent if k in mine):
                agree = False
                tally.example("final_state", f"sequence {number} {name}#{index}: real {mine}, gecko {theirs}")
                break
    tally.final_state_exact.add(agree)


def _replay(tally: Tally, backend: Backend, sequence: Sequence, real_client: httpx.Client,
            gecko_client: httpx.Client, found: list[Resource], toolkit: str) -> int:
    by_name = {r.name: r for r in found}
    empty(real_client, found)
    real = Side(real_client, found, create_gap=backend.create_gap)
    seeded = _seed(real, sequence, by_name)
    gecko = GeckoSide(gecko_client, found, toolkit, {toolkit: seeded})
    gecko.ids = {name: list(ids) for name, ids in real.ids.items()}
    sent_keys: dict[tuple[str, int], set[str]] = {}
    for index, (name, body) in enumerate(sequence.seed):
        sent_keys.setdefault((name, sum(1 for n, _ in sequence.seed[:index] if n == name)), set()).update(body)
    calls = 0
    try:
        for call in sequence.calls:
            res = by_name[call.resource]
            real_answer = real.send(call) if backend.validates or call.intent != "invalid" else None
            gecko_answer = gecko.send(call)
            calls += 1
            if call.intent == "valid" and isinstance(call.body, Mapping) and call.kind in ("create", "replace", "update"):
                made = call.creates if call.kind == "create" else (call.ref.index if call.ref else None)
                if made is not None:
                    keys = sent_keys.setdefault((call.resource, made), set())
                    if call.kind == "replace":
                        keys.clear()
                    keys.update(call.body)
            tally.call(res, call, real_answer, gecko_answer, gecko.state(), real, gecko)
        _final(tally, real, gecko, by_name, sent_keys, sequence.number)
    finally:
        gecko.close()
    return calls


def run(config: ReplayConfig, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Replay `config.sequences` sequences on the backend and on Gecko; the figures as JSON (`progress` is told
    the number of sequences done after each).

    Raises:
        BackendUnavailable: the backend's program is not installed.
        KeyError: an unknown backend name.
    """
    backend = BACKENDS[config.backend]
    doc = json.loads(config.document.read_text())
    found = resources(doc)
    if not found:
        raise ValueError(f"{config.document} declares no collection (POST P with GET P/{{id}})")
    toolkit = config.document.stem
    maker = SequenceMaker(found, config.seed, config.calls)
    tally = Tally(ignores_unheld_filters=backend.ignores_unheld_filters)
    started = time.perf_counter()
    calls = 0
    with ExitStack() as stack:
        real_url = stack.enter_context(running(backend, found, config.npm_dir))
        gecko_url = stack.enter_context(_gecko(config))
        real_client = stack.enter_context(httpx.Client(base_url=real_url, timeout=TIMEOUT))
        gecko_client = stack.enter_context(httpx.Client(base_url=gecko_url, timeout=TIMEOUT))
        for number in range(config.sequences):
            calls += _replay(tally, backend, maker.make(number), real_client, gecko_client, found, toolkit)
            if progress is not None:
                progress(number + 1)
    return {"backend": f"{backend.name} {backend.version}", "validates": backend.validates,
            "document": config.document.name, "resources": [r.name for r in found],
            "sequences": config.sequences, "calls": calls, "seed": config.seed,
            "wall_seconds": round(time.perf_counter() - started, 1), **tally.public()}
