"""`/metrics` of a 2-worker Gecko is the server's, not one worker's: its counters equal what the sessions' own
histories record, whichever worker answers the scrape; every answer carries its request id, which the call's
history entry keeps; `--log-format json` writes one JSON object per line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from tests.conftest import TOOLKITS_DIR
from utils.procs import gecko_server

pytestmark = pytest.mark.integration
RATE_LIMITED = {"faults": {"seed": 1, "rules": [{"name": "burst", "when": {"every": 3}, "do": {"kind": "rate_limit"}}]}}
CALLS_PER_SESSION = 9


def _samples(text: str, name: str) -> dict[str, float]:
    """`{labels: value}` of one metric in Prometheus text."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{"):
            labels, value = line[len(name):].rsplit(" ", 1)
            out[labels] = float(value)
    return out


async def _scrape_every_worker(url: str, attempts: int = 60) -> dict[int, str]:
    """`/metrics` as each worker answers it (worker pid → text): a connection stays with the worker that accepted it,
    which `/health` names. One connection at a time until both workers have answered: a batch of connections opened
    at once goes whole to the worker that wakes first (it accepts every connection waiting), and the same one kept
    winning batch after batch; single connections alternate between the workers."""
    scrapes: dict[int, str] = {}
    for _ in range(attempts):
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            pid = (await client.get("/health")).json()["pid"]
            scrapes[pid] = (await client.get("/metrics")).text
        if len(scrapes) == 2:
            break
        await asyncio.sleep(0.01)
    return scrapes


async def _concurrently(url: str, requests: list[tuple[str, int]]) -> list[httpx.Response]:
    """Every request at once, each on a connection of its own: both workers may get some."""
    async def one(sid: str, i: int) -> httpx.Response:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            arguments = {"title": f"t{i}", "body": "b"} if i % 4 else {"title": "", "body": 1}  # some 422s
            return await client.post("/notes/create_note", json=arguments,
                                     headers={"X-Session-ID": sid, "X-Request-ID": f"call-{sid[:8]}-{i}"})

    return list(await asyncio.gather(*(one(sid, i) for sid, i in requests)))


def test_metrics_of_two_workers_equal_the_sessions_own_counts(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path / "state", log_path=log,
                      extra=["--log-format", "json", "--log-level", "info"]) as url:
        sessions = [httpx.post(f"{url}/sessions", json={"config": RATE_LIMITED if i % 2 else {}}).json()["session_id"]
                    for i in range(4)]
        requests = [(sid, i) for i in range(CALLS_PER_SESSION) for sid in sessions]
        replies = asyncio.run(_concurrently(url, requests))
        assert [r.headers["X-Request-ID"] for r in replies] == [f"call-{sid[:8]}-{i}" for sid, i in requests]
        histories = [httpx.get(f"{url}/sessions/{sid}/history").json()["calls"] for sid in sessions]
        calls = [entry for history in histories for entry in history]
        assert len(calls) == CALLS_PER_SESSION * len(sessions)
        assert sorted(entry["request_id"] for entry in calls) == sorted(f"call-{sid[:8]}-{i}" for sid, i in requests)
        faulted = sum(1 for entry in calls if entry.get("fault"))
        assert faulted > 0
        scrapes = asyncio.run(_scrape_every_worker(url))
    assert len(scrapes) == 2, "no scrape reached the second worker: the test would prove nothing"
    for text in scrapes.values():
        tool = _samples(text, "gecko_requests_total")
        assert sum(v for labels, v in tool.items() if 'kind="tool"' in labels) == len(calls), text
        assert sum(_samples(text, "gecko_faults_injected_total").values()) == faulted
        statuses = {labels: v for labels, v in tool.items() if 'kind="tool"' in labels}
        assert statuses['{kind="tool",status="422"}'] == sum(1 for e in calls if e["status"] == 422)
        assert _samples(text, "gecko_request_duration_seconds_count")['{kind="tool"}'] == len(calls)
    records = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert any("loaded" in r["message"] and r["level"] == "info" for r in records)
    assert {r["pid"] for r in records} >= set(scrapes)  # the workers log JSON too


def test_an_unusable_request_id_is_replaced(client, session) -> None:
    ours = client.post("/notes/create_note", json={"title": "a", "body": "b"},
                       headers={**session, "X-Request-ID": "bad id with spaces"})
    given = ours.headers["X-Request-ID"]
    assert len(given) == 32 and given != "bad id with spaces"
    entry = client.get(f"/sessions/{session['X-Session-ID']}/history").json()["calls"][-1]
    assert entry["request_id"] == given
    assert client.get("/health").headers["X-Request-ID"] != given
