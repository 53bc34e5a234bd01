#!/usr/bin/env python3
"""How faithful a Gecko twin of a real stateful MCP server is, before and after it learns from captured calls.

Per server (`@modelcontextprotocol/server-memory`, a knowledge graph with output schemas and annotations; `ohno-mcp`,
a task tracker with neither, whose errors are in-band `{"error": …}` bodies), both installed by `make npm-tools`:

1. BEFORE: the twin `gecko convert mcp --server CMD` made before issue 32 (input schemas closed with
   `additionalProperties: false` the server did not state); CONVERTED: the twin it makes now (schemas as declared,
   access from the annotations);
2. AFTER: the converted twin after `gecko twin learn` on at most `--capture-calls` real calls (seeded sequences of their
   own, a seed the evaluation does not use; fresh server data);
3. seeded random sequences (valid calls, invalid ones, extra arguments, existing and missing ids) replayed on the
   real server (fresh data each sequence, official MCP SDK client over stdio) and on each twin (served by one Gecko
   with rules engines, one MCP session per sequence, streamable HTTP).

Reported per server and twin: outcome agreement (ok / application error / rejected, `gecko.twin.outcome`), result
key agreement when both succeed, new ids returned by creates (a create's id field holds a value never seen before),
reads that created records (calls of a tool that succeeded on existing records and never changed the server's
data, that added a record to the twin's state), false rejections (the twin refused what the real server accepted). Prints one JSON object.

Run: `python perf/twin_fidelity.py [--sequences 20] [--length 20] [--capture-calls 200] [--seed 7]`.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError

from gecko.convert.document import write_document
from gecko.convert.schema import close_object
from gecko.twin.capture import Capture, capture_of
from gecko.twin.learn import learn_toolkit
from gecko.twin.outcome import classify, result_value
from utils.paths import REPO_ROOT
from utils.procs import gecko_server

NPM_BIN = REPO_ROOT / ".npm-tools" / "node_modules" / ".bin"
WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris", "juniper")
P_INVALID, P_EXTRA, P_EXISTING = 0.1, 0.06, 0.65


@dataclass(frozen=True)
class Server:
    """A real server and what the harness must know to address its records (not given to the twin)."""

    name: str
    command: str
    data_env: str
    """The variable naming the server's data file."""
    id_kinds: Mapping[str, str]
    """Argument name → the kind of record it names."""
    issuers: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Tool → (result field, kind): a create that returns the new record's id."""
    introducers: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Tool → (argument field, kind): a create whose caller names the record (the name is its id)."""


SERVERS = {
    "memory": Server("memory", "mcp-server-memory", "MEMORY_FILE_PATH",
                     {"entityName": "entity", "names": "entity", "entityNames": "entity", "from": "entity",
                      "to": "entity"},
                     introducers={"create_entities": ("name", "entity")}),
    "ohno": Server("ohno", "ohno-mcp", "OHNO_DB_PATH",
                   {"task_id": "task", "depends_on_task_id": "task", "epic_id": "epic", "story_id": "story"},
                   issuers={"create_task": ("task_id", "task"), "create_epic": ("epic_id", "epic"),
                            "create_story": ("story_id", "story")}),
}


# ---- the plan: seeded abstract calls whose ids each system resolves from its own answers ----

def _value(schema: Any, name: str, tool: str, server: Server, rng: random.Random, counter: list[int]) -> Any:
    schema = schema if isinstance(schema, dict) else {}
    if tool in server.introducers and name == server.introducers[tool][0]:
        counter[0] += 1
        return {"$new": server.introducers[tool][1], "n": counter[0]}
    kind = server.id_kinds.get(name)
    kind_type = schema.get("type")
    if kind is not None and kind_type == "string":
        return {"$id": kind, "existing": rng.random() < P_EXISTING, "r": rng.random()}
    if kind is not None and kind_type == "array":
        return [{"$id": kind, "existing": rng.random() < P_EXISTING, "r": rng.random()}
                for _ in range(rng.randint(1, 2))]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if kind_type == "object" or "properties" in schema:
        required = set(schema.get("required") or [])
        props = schema.get("properties") or {}
        return {k: _value(s, k, tool, server, rng, counter) for k, s in props.items()
                if k in required or rng.random() < 0.3}
    if kind_type == "array":
        return [_value(schema.get("items"), name, tool, server, rng, counter) for _ in range(rng.randint(1, 2))]
    if kind_type in ("integer", "number"):
        return rng.randint(1, 5)
    if kind_type == "boolean":
        return rng.random() < 0.5
    return f"{rng.choice(WORDS)} {rng.randint(1, 99)}"


def _break(arguments: dict[str, Any], schema: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Arguments the declared schema refuses: a required one missing, or one of the wrong type."""
    required = list(schema.get("required") or [])
    props = schema.get("properties") or {}
    if required and rng.random() < 0.5:
        dropped = rng.choice(required)
        return {k: v for k, v in arguments.items() if k != dropped}
    if not props:
        return {**arguments, "unexpected": 1} if schema.get("additionalProperties") is False else arguments
    name = rng.choice(sorted(props))
    wrong = 12345 if props[name].get("type") != "integer" and props[name].get("type") != "number" else "not-a-number"
    return {**arguments, name: wrong}


def plan(tools: Mapping[str, dict[str, Any]], server: Server, seed: str, length: int) -> list[tuple[str, Any, str]]:
    """`length` calls: (tool, arguments with id placeholders, kind: valid / invalid / extra)."""
    rng = random.Random(seed)
    names = sorted(tools)
    weights = [3 if n in server.issuers or n in server.introducers else 1 for n in names]
    counter = [0]
    steps = []
    for _ in range(length):
        tool = rng.choices(names, weights)[0]
        schema = tools[tool]
        arguments = _value(schema, "", tool, server, rng, counter)
        arguments = arguments if isinstance(arguments, dict) else {}
        roll = rng.random()
        if roll < P_INVALID:
            steps.append((tool, _break(arguments, schema, rng), "invalid"))
        elif roll < P_INVALID + P_EXTRA and schema.get("additionalProperties") is not False:
            steps.append((tool, {**arguments, "client_note": "extra"}, "extra"))
        else:
            steps.append((tool, arguments, "valid"))
    return steps


def resolve(value: Any, pools: dict[str, list[Any]], missing: Callable[[], str], fresh: list[tuple[str, str]],
            prefix: str) -> Any:
    """The placeholders of a planned call filled from one system's own records."""
    if isinstance(value, dict) and "$id" in value:
        pool = pools.get(value["$id"]) or []
        return pool[int(value["r"] * len(pool))] if value["existing"] and pool else missing()
    if isinstance(value, dict) and "$new" in value:
        name = f"{prefix}{value['$new']}-{value['n']}"
        fresh.append((value["$new"], name))
        return name
    if isinstance(value, dict):
        return {k: resolve(v, pools, missing, fresh, prefix) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, pools, missing, fresh, prefix) for v in value]
    return value


# ---- the two systems ----

@dataclass
class Answer:
    tool: str
    kind: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    changed_data: bool | None = None
    """Real server: its data file changed."""
    records_added: int = 0
    """Twin: records its state gained."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def _records(state: Mapping[str, Any], toolkit: str) -> int:
    part = state.get(toolkit)
    return sum(len(v) for v in part.values() if isinstance(v, (dict, list))) if isinstance(part, Mapping) else 0


def _track(server: Server, tool: str, result: dict[str, Any], pools: dict[str, list[Any]],
           fresh: list[tuple[str, str]]) -> None:
    if classify(result) != "ok":
        return
    for kind, name in fresh:
        pools.setdefault(kind, []).append(name)
    if tool in server.issuers:
        field_name, kind = server.issuers[tool]
        value = result_value(result)
        if isinstance(value, Mapping) and isinstance(value.get(field_name), (str, int)):
            pools.setdefault(kind, []).append(value[field_name])


async def run_real(server: Server, steps: list[tuple[str, Any, str]], data: Path) -> list[Answer]:
    """One sequence on a fresh real server."""
    params = StdioServerParameters(command=str(NPM_BIN / server.command), args=[],
                                   env={**os.environ, server.data_env: str(data),
                                        "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}"})
    answers: list[Answer] = []
    pools: dict[str, list[Any]] = {}
    missing = iter(f"missing-{i}" for i in range(10**6))
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        for tool, planned, kind in steps:
            fresh: list[tuple[str, str]] = []
            arguments = resolve(planned, pools, lambda: next(missing), fresh, "")
            before = _digest(data)
            try:
                reply = await session.call_tool(tool, arguments)
                result = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
            except McpError as exc:
                result = {"jsonrpc_error": exc.error.message}
            _track(server, tool, result, pools, fresh)
            answers.append(Answer(tool, kind, arguments, result, changed_data=_digest(data) != before))
    return answers


async def run_twin(url: str, toolkit: str, server: Server, steps: list[tuple[str, Any, str]]) -> list[Answer]:
    """One sequence in a fresh Gecko session of a twin."""
    answers: list[Answer] = []
    pools: dict[str, list[Any]] = {}
    missing = iter(f"missing-{i}" for i in range(10**6))
    async with AsyncExitStack() as stack, httpx.AsyncClient(timeout=60) as http:
        read, write, sid = await stack.enter_async_context(streamablehttp_client(f"{url}/mcp/{toolkit}"))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        session_id = sid()

        async def records() -> int:
            reply = await http.get(f"{url}/get-session-state", headers={"X-Session-ID": str(session_id)})
            return _records(reply.json().get("state") or {}, toolkit)

        for tool, planned, kind in steps:
            fresh: list[tuple[str, str]] = []
            arguments = resolve(planned, pools, lambda: next(missing), fresh, "")
            before = await records()
            try:
                reply = await session.call_tool(tool, arguments)
                result = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
            except McpError as exc:
                result = {"jsonrpc_error": exc.error.message}
            _track(server, tool, result, pools, fresh)
            answers.append(Answer(tool, kind, arguments, result, records_added=await records() - before))
    return answers


# ---- measures ----

def _keys(value: Any) -> Any:
    if isinstance(value, Mapping):
        return frozenset(value)
    if isinstance(value, list):
        return ("list", _keys(value[0]) if value else None)
    return type(value).__name__


def compare(server: Server, real: list[list[Answer]], twin: list[list[Answer]]) -> dict[str, Any]:
    """The agreement of one twin with the real server over the same planned sequences."""
    calls = agree = both_ok = keys_equal = false_rejections = real_reads = reads_created = 0
    creates = new_ids = 0
    by_kind: Counter[str] = Counter()
    agree_by_kind: Counter[str] = Counter()
    confusion: Counter[str] = Counter()
    # reads: tools that succeeded on existing records (no missing id sent) and never changed the server's data
    read_tools = {a.tool for seq in real for a in seq if classify(a.result) == "ok"
                  and "missing-" not in json.dumps(a.arguments)} - {
        a.tool for seq in real for a in seq if classify(a.result) == "ok" and a.changed_data}
    for real_seq, twin_seq in zip(real, twin, strict=True):
        seen: set[str] = set()
        for r, t in zip(real_seq, twin_seq, strict=True):
            ro, to = classify(r.result), classify(t.result)
            calls += 1
            by_kind[r.kind] += 1
            confusion[f"{ro}->{to}"] += 1
            if ro == to:
                agree += 1
                agree_by_kind[r.kind] += 1
            if ro == "ok" and to == "rejected":
                false_rejections += 1
            if ro == "ok" and to == "ok":
                both_ok += 1
                keys_equal += _keys(result_value(r.result)) == _keys(result_value(t.result))
            if r.tool in read_tools:
                real_reads += 1
                reads_created += t.records_added > 0
            if r.tool in server.issuers and ro == "ok":
                creates += 1
                value = result_value(t.result) if to == "ok" else None
                got = value.get(server.issuers[r.tool][0]) if isinstance(value, Mapping) else None
                if isinstance(got, (str, int)) and str(got) not in seen:
                    new_ids += 1
                    seen.add(str(got))
    return {
        "calls": calls,
        "outcome_agreement": round(agree / calls, 3) if calls else None,
        "outcome_agreement_by_kind": {k: round(agree_by_kind[k] / n, 3) for k, n in sorted(by_kind.items())},
        "key_agreement_on_success": round(keys_equal / both_ok, 3) if both_ok else None,
        "both_ok": both_ok,
        "new_ids_returned_by_creates": round(new_ids / creates, 3) if creates else None,
        "creates": creates,
        "reads_that_created_records": reads_created,
        "reads": real_reads,
        "false_rejections": false_rejections,
        "outcomes_real_to_twin": dict(sorted(confusion.items())),
    }


# ---- the run ----

def _closed(doc: Mapping[str, Any], title: str) -> dict[str, Any]:
    """The twin as `gecko convert mcp` made it before issue 32: every input schema closed
    (`additionalProperties: false` where the server said nothing)."""
    out = copy.deepcopy(dict(doc))
    out["info"]["title"] = title
    for item in out["paths"].values():
        media = item["post"]["requestBody"]["content"]["application/json"]
        media["schema"] = close_object(media["schema"])
    return out


def _tools(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for item in doc["paths"].values():
        op = item["post"]
        out[op["x-gecko-original-name"]] = op["requestBody"]["content"]["application/json"]["schema"]
    return out


def _convert(server: Server, title: str, out: Path, data: Path) -> dict[str, Any]:
    """`python -m gecko.convert mcp --server CMD` as a user runs it."""
    env = {**os.environ, server.data_env: str(data), "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "gecko.convert", "mcp", "--server", str(NPM_BIN / server.command),
                           "--title", title, "-o", str(out)], capture_output=True, text=True, env=env, timeout=120,
                          cwd=REPO_ROOT)
    if done.returncode != 0:
        raise SystemExit(f"gecko convert mcp failed for {server.name}: {done.stderr[-500:]}")
    return json.loads(out.read_text())


async def _capture(server: Server, tools: dict[str, dict[str, Any]], args: argparse.Namespace,
                   work: Path) -> list[Capture]:
    captures: list[Capture] = []
    index = 0
    while len(captures) < args.capture_calls:
        steps = plan(tools, server, f"train-{args.seed}-{index}", min(args.length, args.capture_calls - len(captures)))
        data = work / f"train-{index}.data"
        for answer in await run_real(server, steps, data):
            captures.append(capture_of(answer.tool, answer.arguments, answer.result))
        index += 1
    return captures


async def measure(server: Server, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    kits = work / "toolkits"
    kits.mkdir(parents=True, exist_ok=True)
    converted = _convert(server, f"{server.name}_converted", kits / f"{server.name}_converted.json",
                         work / "convert.data")
    tools = _tools(converted)
    write_document(_closed(converted, f"{server.name}_before"), kits / f"{server.name}_before.json")
    started = time.monotonic()
    captures = await _capture(server, tools, args, work)
    learned, report = learn_toolkit({**converted, "info": {**converted["info"], "title": f"{server.name}_after"}},
                                    captures)
    write_document(learned, kits / f"{server.name}_after.json")
    learn_seconds = time.monotonic() - started
    plans = [plan(tools, server, f"eval-{args.seed}-{i}", args.length) for i in range(args.sequences)]
    real = [await run_real(server, steps, work / f"eval-{i}.data") for i, steps in enumerate(plans)]
    with gecko_server([kits], workers=1, state_dir=work / "state", log_path=work / "gecko.log") as url:
        before = [await run_twin(url, f"{server.name}_before", server, steps) for steps in plans]
        plain = [await run_twin(url, f"{server.name}_converted", server, steps) for steps in plans]
        after = [await run_twin(url, f"{server.name}_after", server, steps) for steps in plans]
    if args.dump is not None:
        with open(args.dump, "a", encoding="utf-8") as dump:
            for seq, (real_seq, after_seq) in enumerate(zip(real, after, strict=True)):
                for r, t in zip(real_seq, after_seq, strict=True):
                    dump.write(json.dumps({"server": server.name, "seq": seq, "tool": r.tool, "kind": r.kind,
                                           "real": [classify(r.result), result_value(r.result), r.arguments],
                                           "after": [classify(t.result), result_value(t.result), t.arguments],
                                           "real_changed_data": r.changed_data, "twin_records_added": t.records_added},
                                          default=str) + "\n")
    return {
        "server": server.command,
        "captured_calls": len(captures),
        "captured_outcomes": dict(Counter(c.outcome for c in captures)),
        "capture_and_learn_seconds": round(learn_seconds, 1),
        "learned": {tool: what for tool, what in sorted(report.tools.items()) if "error convention (from" not in
                    " ".join(what)},
        "real_outcomes": dict(Counter(classify(a.result) for seq in real for a in seq)),
        "before": compare(server, real, before),
        "converted": compare(server, real, plain),
        "after": compare(server, real, after),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default="memory,ohno", help="comma-separated: memory, ohno")
    parser.add_argument("--sequences", type=int, default=20, help="evaluation sequences per server")
    parser.add_argument("--length", type=int, default=20, help="calls per sequence")
    parser.add_argument("--capture-calls", type=int, default=200, help="real calls the AFTER twin learns from")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dump", type=Path, help="append every evaluated call (real vs learned twin) to this file")
    args = parser.parse_args(argv)
    missing = [n for n in args.servers.split(",") if not (NPM_BIN / SERVERS[n].command).exists()]
    if missing:
        print(f"not installed: {missing}; run `make npm-tools`", file=sys.stderr)
        return 1
    out: dict[str, Any] = {"sequences": args.sequences, "length": args.length, "seed": args.seed,
                           "load": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="twin-fidelity-") as tmp:
        for name in args.servers.split(","):
            out[name] = asyncio.run(measure(SERVERS[name], args, Path(tmp) / name))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
