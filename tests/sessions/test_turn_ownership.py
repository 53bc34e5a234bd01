"""A hot session's turn changes its states in place, and nobody outside the turn ever sees it.

Many callers queue on one session, so the store hands it from call to call within a turn (`SessionStore.commit`),
and each call's world-model change may change the collection the turn made in place (`gecko.sessions.owned`).
Meanwhile readers read the session and its versions. Every state a reader got must stay as it was when read, and
must be the stored version it claims to be; a call that changed the state in place and then failed (before its
commit, or in it) must leave no trace; no committed record may be lost.
"""

from __future__ import annotations

import asyncio
import copy
import time
from pathlib import Path
from typing import Any

import pytest

from gecko.pipeline.world import world_change
from gecko.sessions import Commit, SessionRecord, SessionStore, open_store
from gecko.sessions.service import mutate_session
from gecko.toolkits.loader import build_toolkit
from tests.pipeline.test_world_model import HELPDESK

CREATE = build_toolkit(Path("helpdesk.json"), copy.deepcopy(HELPDESK)).operations["create_ticket"]
CALLS = 60


class _Failed(Exception):
    """A call that failed after its change was made."""


@pytest.fixture(params=["memory", "sqlite", "redis-two"])
async def stores(request, tmp_path: Path):
    """The stores the writers use: one (one process) or two on one backend (two processes); all keep every version."""
    kind = request.param
    if kind.startswith("redis"):
        spec, path = request.getfixturevalue("redis_url"), None
    else:
        spec, path = kind.split("-")[0], tmp_path / "turns.db"
    opened = [open_store(spec, sqlite_path=path, ttl=60, max_versions=0, history_limit=0, checkpoint_every=4)
              for _ in range(2 if kind.endswith("-two") else 1)]
    for store in opened:
        await store.open()
    yield opened
    for store in opened:
        await store.close()


async def _create(store: SessionStore, session: str, i: int, fail_before_commit: set[int],
                  progress: list[int] | None = None) -> bool:
    """One create on the session under its hold, the way the runner does it; False when the call failed. Counts
    itself in `progress` when it holds the session (`[0]`) and when it ends (`[1]`)."""
    try:
        async with store.holding(session) as hold:
            if progress is not None:
                progress[0] += 1
            record = await store.read(hold)
            assert record is not None
            placed = world_change(record.state, CREATE, {"title": f"t{i}", "priority": 1},
                                  {"ticket_id": f"K{i}", "title": f"t{i}", "status": "open", "priority": 1},
                                  f"seed{i}", hold.owned)
            assert placed is not None
            state, patch = placed
            assert f"K{i}" in state["helpdesk"]["tickets"]
            await asyncio.sleep(0)  # as the runner's stages do: readers run while the change is not committed
            if i in fail_before_commit:
                raise _Failed(i)
            await store.commit(hold, record, Commit(state=state, patch=patch, history={"i": i}))
        return True
    except Exception:  # noqa: BLE001 - a failed call (injected, or a commit chained behind a failed one)
        return False
    finally:
        if progress is not None:
            progress[1] += 1


async def _read_until(store: SessionStore, session: str, done: asyncio.Event,
                      seen: list[tuple[int, Any, Any]], progress: list[int], midway: list[int]) -> None:
    while not done.is_set():
        record = await store.get(session)
        assert record is not None
        midway[0] += progress[0] > 0 and progress[1] < CALLS  # the turns began and have not all ended
        seen.append((record.version, record.state, copy.deepcopy(record.state)))
        if record.version > 1 and len(seen) % 3 == 0:
            version = record.version - 1
            old = await store.state_at(session, version, record.version)
            seen.append((version, old, copy.deepcopy(old)))
        await asyncio.sleep(0)


async def _run(stores: list[SessionStore], fail_before_commit: set[int], fail_commit_of: set[int]) -> set[int]:
    """CALLS creates queued at once, split over the stores, with a reader on each; returns the calls that succeeded
    after checking every state a reader got."""
    session = f"turns-{time.time_ns()}"
    await stores[0].create(SessionRecord(id=session, state={}))
    for store in stores:
        commit = store._commit

        async def failing(record: SessionRecord, change: Commit, release: str | None, commit: Any = commit) -> Any:
            if change.history is not None and change.history["i"] in fail_commit_of:
                raise RuntimeError("the store refused this write")
            return await commit(record, change, release)

        store._commit = failing  # type: ignore[method-assign,assignment]
    done, seen, progress, midway = asyncio.Event(), list[tuple[int, Any, Any]](), [0, 0], [0]
    readers = [asyncio.create_task(_read_until(store, session, done, seen, progress, midway)) for store in stores]
    outcomes = await asyncio.gather(*(_create(stores[i % len(stores)], session, i, fail_before_commit, progress)
                                      for i in range(CALLS)))
    done.set()
    await asyncio.gather(*readers)
    succeeded = {i for i, ok in enumerate(outcomes) if ok}

    last = await stores[0].get(session)
    assert last is not None and last.version == len(succeeded)
    for store in stores:
        store._states.clear()  # from the stored rows alone
    stored = [await stores[0].state_at(session, v, last.version) for v in range(last.version + 1)]
    # reads in the middle of the turns (a store that commits a turn's writes in one transaction shows few versions
    # between the first and the last, so this counts the reads made while the turns went on)
    assert midway[0] > 3
    assert len({version for version, _, _ in seen} - {0, last.version}) >= 1
    for version, state, snapshot in seen:
        assert state == snapshot, f"a state read at version {version} changed afterwards"
        assert snapshot == stored[version], f"the state read as version {version} is not the stored one"
    tickets = stored[-1]["helpdesk"]["tickets"]
    assert set(tickets) == {"T1", *(f"K{i}" for i in succeeded)}
    for version in range(1, last.version + 1):  # each version adds one record to the one before
        assert len(stored[version]["helpdesk"]["tickets"]) == len(stored[version - 1].get("helpdesk", {}).get(
            "tickets", {"T1": 0})) + 1
    return succeeded


async def test_a_hot_turn_loses_nothing_and_readers_see_only_stored_versions(stores) -> None:
    assert await _run(stores, set(), set()) == set(range(CALLS))


async def test_a_call_that_failed_after_changing_in_place_leaves_no_trace(stores) -> None:
    failed = {3, 4, 17, 40}
    assert await _run(stores, failed, set()) == set(range(CALLS)) - failed


async def test_a_write_the_store_refused_leaves_no_trace(stores) -> None:
    succeeded = await _run(stores, set(), {5, 30})
    assert not succeeded & {5, 30}
    assert set(range(5)) <= succeeded  # the calls chained behind a refused write in its turn fail with it


async def test_a_state_endpoint_in_the_middle_of_a_turn_returns_a_state_no_later_call_changes(stores) -> None:
    """`mutate_session` (the state endpoints) returns the new state after the session went to the next caller of
    the turn: that state shares the turn's collections, and must still be what it was when it was stored."""
    session = f"endpoint-{time.time_ns()}"
    await stores[0].create(SessionRecord(id=session, state={}))

    async def flag(record: SessionRecord) -> Commit:
        return Commit(state={**record.state, "flag": 1}, patch=[{"op": "add", "path": "/flag", "value": 1}],
                      history={"i": -1})

    async def endpoint() -> tuple[Any, Any]:
        record, _ = await mutate_session(stores[0], session, flag)
        return record.state, copy.deepcopy(record.state)

    # queued in this order on the first store: half the creates, the endpoint, the other half
    creates = [asyncio.create_task(_create(stores[0], session, i, set())) for i in range(CALLS // 2)]
    called = asyncio.create_task(endpoint())
    creates += [asyncio.create_task(_create(stores[i % len(stores)], session, i, set()))
                for i in range(CALLS // 2, CALLS)]
    assert all(await asyncio.gather(*creates))
    returned, snapshot = await called
    assert returned == snapshot
    assert 0 < len(snapshot["helpdesk"]["tickets"]) < CALLS + 1  # it came in the middle of the turn
