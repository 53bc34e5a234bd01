from __future__ import annotations

import asyncio
import time

import pytest

from gecko.sessions import Commit, SessionRecord, VersionConflict, open_store
from gecko.sessions.service import fork_session, mutate_session


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request, tmp_path):
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        s = open_store(url, sqlite_path=None, ttl=60, history_limit=5)
    else:
        s = open_store(request.param, sqlite_path=tmp_path / "s.db", ttl=60, history_limit=5)
    await s.open()
    yield s
    await s.close()


async def test_create_get_delete(store):
    record = SessionRecord(id=f"s-{time.time_ns()}", config={"toolkits": ["a"]}, state={"x": []})
    await store.create(record)
    got = await store.get(record.id)
    assert got.state == {"x": []} and got.config == {"toolkits": ["a"]} and got.version == 0
    assert await store.delete(record.id) is True
    assert await store.get(record.id) is None
    assert await store.delete(record.id) is False


async def test_commit_versions_history_and_snapshots(store):
    record = SessionRecord(id=f"v-{time.time_ns()}", state={"n": 0})
    await store.create(record)
    for i in range(1, 8):
        got, owner = await store.begin(record.id)
        version = await store.finish(record.id, owner, got.version, Commit(history={"i": i}, state={"n": i}))
        assert version == i
    got, owner = await store.begin(record.id)
    assert await store.finish(record.id, owner, got.version, Commit(history={"read": True})) == 7
    assert (await store.get(record.id)).state == {"n": 7}
    history = await store.history(record.id, 100, 0)
    assert [h.get("i") for h in history] == [4, 5, 6, 7, None]  # trimmed to history_limit=5 (lazily for sqlite)
    assert [h.get("i") for h in await store.history_tail(record.id, 2)] == [7, None]
    assert await store.snapshot(record.id, 7) == {"n": 7}


async def test_stale_version_is_a_conflict(store):
    record = SessionRecord(id=f"c-{time.time_ns()}")
    await store.create(record)
    got, owner = await store.begin(record.id)
    with pytest.raises(VersionConflict):
        await store.finish(record.id, owner, got.version + 3, Commit(state={"lost": True}))
    assert (await store.get(record.id)).state == {}
    got, owner = await store.begin(record.id)  # the lease was released by the failed finish
    await store.abort(record.id, owner)


async def test_missing_session_begins_as_none(store):
    got, _ = await store.begin("no-such-session")
    assert got is None


async def test_concurrent_mutations_lose_no_update(store):
    record = SessionRecord(id=f"m-{time.time_ns()}", state={"items": []})
    await store.create(record)

    async def add(i: int) -> None:
        async def change(rec: SessionRecord) -> Commit:
            await asyncio.sleep(0)
            return Commit(state={"items": [*rec.state["items"], i]})

        await mutate_session(store, record.id, change)

    await asyncio.gather(*(add(i) for i in range(64)))
    final = await store.get(record.id)
    assert sorted(final.state["items"]) == list(range(64)) and final.version == 64


async def test_fork_copies_state_and_config(store):
    record = SessionRecord(id=f"f-{time.time_ns()}", config={"record_reads": True}, state={"a": {"b": 1}})
    await store.create(record)
    child = await fork_session(store, record.id)
    assert child.id != record.id and child.state == {"a": {"b": 1}}
    assert child.config == {"record_reads": True, "forked_from": record.id}
    got, owner = await store.begin(child.id)
    await store.finish(child.id, owner, got.version, Commit(state={"a": {"b": 2}}))
    assert (await store.get(record.id)).state == {"a": {"b": 1}}


async def test_ttl_expiry(tmp_path, request):
    for spec in ("memory", "sqlite"):
        s = open_store(spec, sqlite_path=tmp_path / "ttl.db", ttl=0.3, history_limit=10)
        await s.open()
        await s.create(SessionRecord(id="short"))
        assert await s.get("short") is not None
        await asyncio.sleep(0.5)
        assert await s.get("short") is None
        got, _ = await s.begin("short")
        assert got is None
        await s.purge_expired()
        assert await s.count() == 0
        await s.close()


async def test_workers_heartbeat(store):
    await store.heartbeat()
    assert await store.live_workers() >= 1
