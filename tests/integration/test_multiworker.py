"""Real uvicorn with 2 workers on 127.0.0.1, driven over HTTP."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import TOOLKITS_DIR
from utils.procs import gecko_server

pytestmark = pytest.mark.integration
NOTE = {"title": "t", "body": "b"}


def test_health_reports_two_live_workers(live_gecko):
    health = httpx.get(f"{live_gecko}/health").json()
    assert health["workers"] == {"configured": 2, "live": 2} and health["store"] == "sqlite"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_are_forked_from_the_master_that_loaded_the_toolkits(live_gecko):
    """A spawned worker (uvicorn's way) imports Gecko and loads every toolkit again; a forked one shares the master's
    (issue 33 item 8). A spawned worker's command line is multiprocessing's `spawn_main`, a forked one's the master's."""
    pids: set[int] = set()
    for _ in range(100):
        pids.add(httpx.get(f"{live_gecko}/health", headers={"Connection": "close"}).json()["pid"])
        if len(pids) == 2:
            break
    assert len(pids) == 2
    for pid in pids:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert b"-m" in command and b"gecko" in command and not any(b"spawn_main" in part for part in command)


def test_sessions_work_across_workers_on_fresh_connections(live_gecko):
    pids: set[int] = set()
    sessions: list[str] = []
    for i in range(200):
        with httpx.Client(base_url=live_gecko, headers={"Connection": "close"}, timeout=10) as fresh:
            if i % 4 == 0:
                r = fresh.get("/session-id")
                assert r.status_code == 200
                sessions.append(r.json()["session_id"])
            elif i % 4 == 1:
                r = fresh.get("/health")
                assert r.status_code == 200
                pids.add(r.json()["pid"])
            elif i % 4 == 2:
                r = fresh.post("/notes/create_note", json={**NOTE, "title": f"n{i}"},
                               headers={"X-Session-ID": sessions[-1]})
                assert r.status_code == 200, r.text
            else:
                r = fresh.get("/get-session-state", headers={"X-Session-ID": sessions[-1]})
                assert r.status_code == 200 and len(r.json()["state"]["notes"]["notes"]) == 1
    assert len(pids) == 2, "both workers should have answered"


async def _concurrent_writes(url: str, session: str, n: int) -> list[int]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        responses = await asyncio.gather(*(
            client.post("/notes/create_note", json={**NOTE, "title": f"w{i}"}, headers={"X-Session-ID": session})
            for i in range(n)))
    return [r.status_code for r in responses]


def assert_no_lost_update(url: str, sid: str, n: int) -> None:
    """n writes on one session: n versions, each made once, in order, and every write in the history."""
    state = httpx.get(f"{url}/get-session-state", headers={"X-Session-ID": sid}).json()
    assert state["version"] == n and state["state"]["counts"] == {"notes/create_note": n}
    calls = httpx.get(f"{url}/sessions/{sid}/history", params={"limit": 1000}).json()["calls"]
    assert sorted(c["state_version"] for c in calls) == list(range(1, n + 1))  # no gap, no duplicate
    assert sorted(c["arguments"]["title"] for c in calls) == sorted(f"w{i}" for i in range(n))
    seen: set[str] = set()
    titles = []
    for version in range(1, n + 1):  # each version holds one more note: the write of that version
        notes = httpx.get(f"{url}/sessions/{sid}/state", params={"version": version}).json()["state"]["notes"]["notes"]
        (added,) = {note["title"] for note in notes.values()} - seen
        seen.add(added)
        titles.append(added)
    assert titles == [c["arguments"]["title"] for c in sorted(calls, key=lambda c: c["state_version"])]


def test_64_concurrent_writers_lose_no_update(live_gecko):
    sid = httpx.get(f"{live_gecko}/session-id").json()["session_id"]
    statuses = asyncio.run(_concurrent_writes(live_gecko, sid, 64))
    assert statuses == [200] * 64
    assert_no_lost_update(live_gecko, sid, 64)


def test_redis_store_with_two_workers(redis_url, tmp_path):
    with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path, extra=["--store", redis_url]) as url:
        assert httpx.get(f"{url}/health").json()["store"] == "redis"
        sid = httpx.get(f"{url}/session-id").json()["session_id"]
        statuses = asyncio.run(_concurrent_writes(url, sid, 64))
        assert statuses == [200] * 64
        assert_no_lost_update(url, sid, 64)


def test_a_worker_that_dies_is_replaced_by_one_serving_the_same_toolkits(tmp_path):
    """uvicorn replaces a dead worker; forked from the master, the new one has the master's toolkits loaded."""
    with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path) as url:
        first = {httpx.get(f"{url}/health", headers={"Connection": "close"}).json()["pid"] for _ in range(20)}
        victim = next(iter(first))
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        pids: set[int] = set()
        while time.monotonic() < deadline and not pids - first:
            time.sleep(0.2)
            try:
                pids.add(httpx.get(f"{url}/health", headers={"Connection": "close"}, timeout=5).json()["pid"])
            except httpx.HTTPError:
                continue
        assert pids - first, "no new worker answered"
        sid = httpx.get(f"{url}/session-id").json()["session_id"]
        for _ in range(20):  # both workers, the new one among them, serve the toolkits
            with httpx.Client(base_url=url, headers={"Connection": "close", "X-Session-ID": sid}) as fresh:
                assert fresh.post("/notes/create_note", json=NOTE).status_code == 200


def test_startup_fails_clearly_on_invalid_toolkit(tmp_path):
    import subprocess
    import sys

    from tests.conftest import INVALID_DIR
    from utils.paths import REPO_ROOT

    proc = subprocess.run([sys.executable, str(REPO_ROOT / "run_gecko_server.py"), "--schemas-dir", str(INVALID_DIR),
                           "--state-dir", str(tmp_path), "--port", "1"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "broken.json" in proc.stderr
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "run_gecko_server.py"), "--schemas-dir",
                           str(tmp_path / "nope"), "--port", "1"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
