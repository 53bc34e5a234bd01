"""A session's calls cost the same at its 50th and its 1,000th call: counted work, not timed.

One session, sequential valid `create_note` writes through the real app (rules engines, world model on: every
write adds a record, so the state grows with the session). Two measures per call, early and late:

- Python lines and calls executed on the event loop (`sys.settrace`): any per-call loop over the session's
  records, calls or versions (id scans, state walks, deep copies, patch replays) shows up here;
- bytes the store serialises and parses (JSON text in and out of it): a whole state written or read per call
  (a full-state column, a state re-parsed on every read, checkpoints of a growing state too often) shows up here.

Neither may grow with the session's length.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from gecko.app import create_app
from utils.settings import Settings

TOOLKITS_DIR = Path(__file__).resolve().parent.parent / "data" / "openapi"
EARLY, LATE, WINDOW = 50, 1000, 20


class _Counter:
    """Lines and calls traced on this thread while on."""

    def __init__(self) -> None:
        self.events = 0

    def trace(self, frame: Any, event: str, arg: Any) -> Callable[..., Any]:
        self.events += 1
        return self.trace


class _Bytes:
    """JSON text through the store's serialisers (the writer thread's too)."""

    def __init__(self) -> None:
        self.total = 0

    def wrap(self, func: Callable[..., Any], *, text_in: bool) -> Callable[..., Any]:
        def counted(value: Any, *args: Any, **kwargs: Any) -> Any:
            result = func(value, *args, **kwargs)
            self.total += len(value if text_in else result)
            return result
        return counted


@asynccontextmanager
async def _app(tmp_path: Path, store: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(schemas_dirs=[TOOLKITS_DIR], workers=1, store=store, state_dir=tmp_path,
                              history_limit=0, max_versions=0))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            yield client


@pytest.fixture(params=["sqlite", "redis"])
def store_spec(request: pytest.FixtureRequest) -> str:
    return "sqlite" if request.param == "sqlite" else request.getfixturevalue("redis_url")


async def test_per_call_work_does_not_grow_with_the_session(tmp_path: Path, store_spec: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import gecko.sessions.redis as redis_store
    import gecko.sessions.sqlite as sqlite_store
    import gecko.sessions.store as base_store

    counted = _Bytes()
    for module in (sqlite_store, redis_store, base_store):
        for name, text_in in (("loads", True), ("dumps_compact", False), ("_dumps", False)):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, counted.wrap(getattr(module, name), text_in=text_in))
    async with _app(tmp_path, store_spec) as client:
        sid = (await client.get("/session-id")).json()["session_id"]
        headers = {"X-Session-ID": sid}

        async def call(i: int) -> None:
            body = {"title": f"note {i}", "body": "text of the note", "tags": ["growth"]}
            response = await client.post("/notes/create_note", json=body, headers=headers)
            assert response.status_code == 200, response.text

        async def traced(first: int) -> int:
            counter = _Counter()
            sys.settrace(counter.trace)
            try:
                for i in range(first, first + WINDOW):
                    await call(i)
            finally:
                sys.settrace(None)
            return counter.events

        bytes_per_call: dict[int, float] = {}
        events: dict[int, int] = {}
        done = 0
        for mark in (EARLY, LATE):
            for i in range(done, mark - WINDOW):
                await call(i)
            events[mark] = await traced(mark - WINDOW)
            done = mark
            bytes_per_call[mark] = counted.total / mark
        state = (await client.get("/get-session-state", headers=headers)).json()["state"]

    assert len(state["notes"]["notes"]) == LATE  # the world grew: one record per call
    assert events[LATE] <= 1.2 * events[EARLY], events
    # checkpoints, spread over the versions before them, cost at most as much as the deltas themselves
    assert bytes_per_call[LATE] <= 1.5 * bytes_per_call[EARLY], bytes_per_call


async def test_two_workers_carry_the_id_index_through_each_others_writes(tmp_path: Path, store_spec: str) -> None:
    """Two workers on one store, taking turns: each call first catches up on the other's write. Catching up carries
    the world model's id index over from the delta, so the calls late in the session build no index (a C-level
    pass over every record, invisible to the tracer above) except after reading a checkpoint."""
    from gecko.pipeline.world.store import _INDEXES

    async with _app(tmp_path, store_spec) as first, _app(tmp_path, store_spec) as second:
        clients = [first, second]
        sid = (await first.get("/session-id")).json()["session_id"]
        headers = {"X-Session-ID": sid}
        builds = 0
        for i in range(LATE):
            if i == LATE - WINDOW:
                builds = _INDEXES.builds
            body = {"title": f"note {i}", "body": "text of the note", "tags": ["growth"]}
            response = await clients[i % 2].post("/notes/create_note", json=body, headers=headers)
            assert response.status_code == 200, response.text
        state = (await second.get("/get-session-state", headers=headers)).json()["state"]

    assert len(state["notes"]["notes"]) == LATE
    assert _INDEXES.builds - builds <= 1  # after one checkpoint read at most in the window


async def test_many_sessions_written_in_turn_keep_their_id_indexes(tmp_path: Path, store_spec: str) -> None:
    """64 sessions written round-robin (a load generator's 64 connections, one session each): every session's
    collection keeps its id index between its calls, so after the first round no create builds one."""
    from gecko.pipeline.world.store import _INDEXES

    async with _app(tmp_path, store_spec) as client:
        sessions = [(await client.get("/session-id")).json()["session_id"] for _ in range(64)]
        builds = 0
        for turn in range(4):
            if turn == 2:
                builds = _INDEXES.builds
            for number, sid in enumerate(sessions):
                body = {"title": f"note {turn}.{number}", "body": "text", "tags": ["many"]}
                response = await client.post("/notes/create_note", json=body, headers={"X-Session-ID": sid})
                assert response.status_code == 200, response.text
    assert _INDEXES.builds == builds
