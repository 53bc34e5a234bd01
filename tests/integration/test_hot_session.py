"""A hot session across 2 workers: tool calls and state endpoints queue (no 409), no lost update, no gap;
a burst of 1,000 concurrent calls gets no error on either store."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.conftest import TOOLKITS_DIR
from utils.procs import gecko_server

pytestmark = pytest.mark.integration


async def _mixed_burst(url: str, sid: str, writes: int, each: int) -> list[tuple[str, int]]:
    headers = {"X-Session-ID": sid}
    limits = httpx.Limits(max_connections=writes + 3 * each, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60, headers=headers) as client:
        requests = [("write", client.post("/notes/create_note", json={"title": f"w{i}", "body": "b"}))
                    for i in range(writes)]
        for i in range(each):
            requests += [("checklist", client.post(f"/sessions/{sid}/checklist", json={"task": f"task {i}"})),
                         ("set", client.post("/set-session-state", json={"state": {"set": i}})),
                         ("init", client.post("/init-session-state", json={"state": {"init": i}}))]
        responses = await asyncio.gather(*(request for _, request in requests))
    return [(kind, r.status_code) for (kind, _), r in zip(requests, responses)]


def _check_mixed(url: str) -> None:
    sid = httpx.get(f"{url}/session-id").json()["session_id"]
    results = asyncio.run(_mixed_burst(url, sid, 40, 8))
    assert [r for r in results if r[1] != 200] == []
    calls = httpx.get(f"{url}/sessions/{sid}/history", params={"limit": 1000}).json()["calls"]
    assert len(calls) == 56  # checklists are cached on the session, not calls
    assert sorted(c["state_version"] for c in calls) == list(range(1, 57))  # one version each: no gap, no duplicate


def test_state_endpoints_queue_with_tool_calls_sqlite(live_gecko):
    _check_mixed(live_gecko)


def test_state_endpoints_queue_with_tool_calls_redis(redis_url, tmp_path):
    with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path, extra=["--store", redis_url]) as url:
        _check_mixed(url)


async def _burst(url: str, calls: int, sessions: int) -> list[int | str]:
    limits = httpx.Limits(max_connections=calls, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        sids = [(await client.get("/session-id")).json()["session_id"] for _ in range(sessions)]
        responses = await asyncio.gather(*(
            client.post("/notes/create_note", json={"title": f"t{i}", "body": "b"},
                        headers={"X-Session-ID": sids[i % sessions]}) for i in range(calls)),
            return_exceptions=True)
    return [r.status_code if isinstance(r, httpx.Response) else repr(r) for r in responses]


@pytest.mark.slow
@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_1000_concurrent_calls_get_no_error(store, tmp_path, request):
    extra = ["--store", request.getfixturevalue("redis_url")] if store == "redis" else []
    with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path, extra=extra) as url:
        statuses = asyncio.run(_burst(url, 1000, 100))
    assert [s for s in statuses if s != 200] == []
