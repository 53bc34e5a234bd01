"""The three stores behave the same: versions, deltas and checkpoints, retention, the hold, TTL."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from gecko.sessions import Commit, SessionRecord, VersionConflict, VersionGone, open_store
from gecko.sessions.service import fork_session, mutate_session
from gecko.sessions.versions import TRIM_EVERY

BACKENDS = ["memory", "sqlite", "redis"]


async def _open(request, tmp_path, **options):
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        s = open_store(url, sqlite_path=None, **options)
    else:
        s = open_store(request.param, sqlite_path=tmp_path / f"s-{time.time_ns()}.db", **options)
    await s.open()
    return s


@pytest.fixture(params=BACKENDS)
async def store(request, tmp_path):
    s = await _open(request, tmp_path, ttl=60, history_limit=5, max_versions=0, checkpoint_every=4)
    yield s
    await s.close()


@pytest.fixture(params=BACKENDS)
async def small_store(request, tmp_path):
    """Keeps 5 calls and 10 versions, a checkpoint every 4."""
    s = await _open(request, tmp_path, ttl=60, history_limit=5, max_versions=10, checkpoint_every=4)
    yield s
    await s.close()


async def _write(store, session_id: str, state=None, patch=None, history=None) -> int:
    async with store.holding(session_id) as hold:
        record = await store.read(hold)
        return await store.commit(hold, record, Commit(history=history, state=state, patch=patch))


async def _stored_rows(store, session_id: str) -> tuple[int, int]:
    """(history entries, version rows) physically stored for the session."""
    if store.backend == "memory":
        return len(store._history.get(session_id, ())), len(store._versions.get(session_id, {}))
    if store.backend == "sqlite":
        history = await store._read("SELECT COUNT(entry) FROM steps WHERE session_id=?", (session_id,))
        versions = await store._read("SELECT COUNT(body) FROM steps WHERE session_id=?", (session_id,))
        return history[0][0], versions[0][0]
    return await store._client.llen(store._k("h", session_id)), await store._client.hlen(store._k("v", session_id))


async def test_create_get_delete(store):
    record = SessionRecord(id=f"s-{time.time_ns()}", config={"toolkits": ["a"]}, state={"x": []})
    await store.create(record)
    got = await store.get(record.id)
    assert got.state == {"x": []} and got.config == {"toolkits": ["a"]} and got.version == 0
    assert await store.delete(record.id) is True
    assert await store.get(record.id) is None
    assert await store.delete(record.id) is False


async def test_commit_versions_history_and_states(store):
    record = SessionRecord(id=f"v-{time.time_ns()}", state={"n": 0})
    await store.create(record)
    for i in range(1, 8):
        version = await _write(store, record.id, {"n": i}, [{"op": "replace", "path": "/n", "value": i}], {"i": i})
        assert version == i
    assert await _write(store, record.id, history={"read": True}) == 7
    got = await store.get(record.id)
    assert got.state == {"n": 7} and got.calls == 8
    history = await store.history(record.id, 100, 0)
    assert [h.get("i") for h in history] == [4, 5, 6, 7, None]  # the last history_limit=5 calls, on every store
    assert [h.get("i") for h in await store.history(record.id, 2, 1)] == [5, 6]
    assert [h.get("i") for h in await store.history_tail(record.id, 2)] == [7, None]
    assert [await store.state_at(record.id, v, 7) for v in range(8)] == [{"n": v} for v in range(8)]


def _random_step(rng: random.Random, state: dict, step: int) -> tuple[dict, list | None]:
    """A new state and the patch to it (None: a whole replacement, as set-session-state does)."""
    kind = rng.random()
    if kind < 0.1:
        return {"replaced": step, "items": []}, None
    items = state.get("items", [])
    if kind < 0.3 and items:
        return {**state, "items": items[1:]}, [{"op": "remove", "path": "/items/0"}]
    entry = {"k": step, "nested": {"v": [step, str(step)]}}
    new = {**state, "items": [*items, entry], "last": step}
    return new, [{"op": "add", "path": "/items/-", "value": entry}, {"op": "add", "path": "/last", "value": step}]


async def test_every_version_rebuilds_exactly_from_checkpoints_and_deltas(store):
    rng = random.Random(7)
    record = SessionRecord(id=f"d-{time.time_ns()}", state={"items": []})
    await store.create(record)
    states = [record.state]
    for step in range(1, 90):
        state, patch = _random_step(rng, states[-1], step)
        assert await _write(store, record.id, state, patch, {"step": step}) == step
        states.append(state)
    for version, expected in enumerate(states):
        assert await store.state_at(record.id, version, len(states) - 1) == expected, version
    with pytest.raises(VersionGone):
        await store.state_at(record.id, len(states), len(states) - 1)


async def test_versions_and_history_are_kept_within_their_window(small_store):
    store = small_store
    record = SessionRecord(id=f"w-{time.time_ns()}", state={"n": 0})
    await store.create(record)
    for i in range(1, 101):
        await _write(store, record.id, {"n": i}, [{"op": "replace", "path": "/n", "value": i}], {"i": i})
    for version in range(91, 101):
        assert await store.state_at(record.id, version, 100) == {"n": version}
    with pytest.raises(VersionGone, match="91..100"):
        await store.state_at(record.id, 90, 100)
    assert [h["i"] for h in await store.history(record.id, 100, 0)] == [96, 97, 98, 99, 100]
    history_rows, version_rows = await _stored_rows(store, record.id)
    assert history_rows <= 5 + TRIM_EVERY
    assert version_rows <= 10 + 4 + TRIM_EVERY  # the window, back to its checkpoint, trimmed every TRIM_EVERY


async def test_stale_version_is_a_conflict_and_frees_the_session(store):
    record = SessionRecord(id=f"c-{time.time_ns()}")
    await store.create(record)
    hold = await store.acquire(record.id)
    stale = await store.read(hold)
    stale.version += 3
    with pytest.raises(VersionConflict):
        await store.commit(hold, stale, Commit(state={"lost": True}))
    await store.release(hold)
    assert (await store.get(record.id)).state == {}
    assert await asyncio.wait_for(_write(store, record.id, {"ok": 1}), 5) == 1


async def test_missing_session_reads_as_none(store):
    async with store.holding("no-such-session") as hold:
        assert await store.read(hold) is None


async def test_concurrent_mutations_lose_no_update(store):
    record = SessionRecord(id=f"m-{time.time_ns()}", state={"items": []})
    await store.create(record)

    async def add(i: int) -> None:
        async def change(rec: SessionRecord) -> Commit:
            await asyncio.sleep(0)
            return Commit(state={"items": [*rec.state["items"], i]}, history={"i": i})

        await mutate_session(store, record.id, change)

    await asyncio.gather(*(add(i) for i in range(64)))
    final = await store.get(record.id)
    assert sorted(final.state["items"]) == list(range(64)) and final.version == 64 and final.calls == 64


async def test_fork_starts_from_the_latest_state_only(store):
    record = SessionRecord(id=f"f-{time.time_ns()}", config={"record_reads": True}, state={"a": {"b": 0}})
    await store.create(record)
    for i in range(1, 6):
        await _write(store, record.id, {"a": {"b": i}}, [{"op": "replace", "path": "/a/b", "value": i}], {"i": i})
    child = await fork_session(store, record.id)
    assert child.id != record.id and child.state == {"a": {"b": 5}} and child.version == 0
    assert child.config == {"record_reads": True, "forked_from": record.id, "fork_version": 5}
    assert await _stored_rows(store, child.id) == (0, 1)  # one checkpoint, no history
    await _write(store, child.id, {"a": {"b": 9}}, [{"op": "replace", "path": "/a/b", "value": 9}])
    assert (await store.get(record.id)).state == {"a": {"b": 5}}


async def test_delete_frees_history_and_versions(store):
    record = SessionRecord(id=f"x-{time.time_ns()}", state={"n": 0})
    await store.create(record)
    for i in range(1, 10):
        await _write(store, record.id, {"n": i}, [{"op": "replace", "path": "/n", "value": i}], {"i": i})
    assert await store.delete(record.id)
    assert await _stored_rows(store, record.id) == (0, 0)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_sweep_purges_expired_sessions_with_their_versions_and_history(backend, tmp_path, request):
    request.param = backend
    s = await _open(request, tmp_path, ttl=0.3, history_limit=10)
    sid = f"short-{time.time_ns()}"
    await s.create(SessionRecord(id=sid, state={"n": 0}))
    for i in range(1, 5):
        await _write(s, sid, {"n": i}, [{"op": "replace", "path": "/n", "value": i}], {"i": i})
    assert await _stored_rows(s, sid) == (4, 5)
    await asyncio.sleep(0.5)
    assert await s.purge_expired() >= 1
    assert await s.get(sid) is None
    async with s.holding(sid) as hold:
        assert await s.read(hold) is None
    assert await s.count() == 0 or backend == "redis"  # the shared Redis may hold other tests' sessions
    assert await _stored_rows(s, sid) == (0, 0)
    await s.close()


async def test_workers_heartbeat(store):
    await store.heartbeat()
    assert await store.live_workers() >= 1
