"""SQLite deletes steps out of their windows in groups (`TRIM_GROUP_ROWS`), many sessions per transaction: reads
never show what is out of a window, storage stays bounded, and a group acts on the records as they stand."""

from __future__ import annotations

from pathlib import Path

from gecko.sessions import Commit, SessionRecord, open_store
from gecko.sessions.sqlite import SqliteStore
from gecko.sessions.versions import TRIM_EVERY

HISTORY = 40
VERSIONS = 48
CHECKPOINT_EVERY = 4
STEPS = max(HISTORY, VERSIONS + CHECKPOINT_EVERY)
"""A step holds a call and the version it made, and goes when both are out: the longer window decides."""


async def _open(path: Path, history: int = HISTORY, versions: int = VERSIONS) -> SqliteStore:
    store = open_store("sqlite", sqlite_path=path, ttl=60, history_limit=history, max_versions=versions,
                       checkpoint_every=CHECKPOINT_EVERY)
    assert isinstance(store, SqliteStore)
    await store.open()
    return store


async def _call(store: SqliteStore, session_id: str, n: int, write: bool = True) -> None:
    async with store.holding(session_id) as hold:
        change = {"state": {"n": n}, "patch": [{"op": "replace", "path": "/n", "value": n}]} if write else {}
        await store.commit(hold, await store.read(hold), Commit(history={"n": n}, **change))


async def _steps(store: SqliteStore, session_id: str) -> tuple[int, int, int]:
    """(steps, history entries, versions) stored for the session."""
    rows = await store._read("SELECT COUNT(*), COUNT(entry), COUNT(body) FROM steps WHERE session_id=?", (session_id,))
    return rows[0]


async def test_old_steps_go_in_groups_and_reads_show_only_the_window(tmp_path: Path) -> None:
    store = await _open(tmp_path / "s.db")
    group = max(TRIM_EVERY, min(HISTORY, VERSIONS))
    try:
        ids = [f"t{i}" for i in range(3)]
        for sid in ids:
            await store.create(SessionRecord(id=sid, state={"n": 0}))
        most = 0
        for n in range(1, 201):
            for sid in ids:
                await _call(store, sid, n)
                most = max(most, (await _steps(store, sid))[0])
        assert STEPS < most <= STEPS + group + TRIM_EVERY, most  # at most a group beyond the windows
        for sid in ids:
            assert [h["n"] for h in await store.history(sid, 1000, 0)] == list(range(161, 201))
            assert [h["n"] for h in await store.history_tail(sid, 1000)] == list(range(161, 201))
            assert await store.state_at(sid, 200 - VERSIONS + 1, 200) == {"n": 200 - VERSIONS + 1}
        await store.purge_expired()  # the sweep deletes what is pending
        for sid in ids:
            assert (await _steps(store, sid))[0] <= STEPS + TRIM_EVERY
    finally:
        await store.close()


async def test_calls_past_the_history_window_go_while_the_versions_they_did_not_make_stay(tmp_path: Path) -> None:
    store = await _open(tmp_path / "s.db", versions=1000)  # a window of versions this session never leaves
    try:
        await store.create(SessionRecord(id="reads", state={"n": 0}))
        for n in range(1, 6):
            await _call(store, "reads", n)
        for n in range(6, 306):
            await _call(store, "reads", n, write=False)
        await store.purge_expired()
        steps, entries, versions = await _steps(store, "reads")
        assert versions == 6  # 0..5, all in the window
        assert entries <= HISTORY + TRIM_EVERY + 5  # the window, what is pending, the calls that made versions
        assert [h["n"] for h in await store.history("reads", 1000, 0)] == list(range(266, 306))
        assert [await store.state_at("reads", v, 5) for v in range(6)] == [{"n": v} for v in range(6)]
        for n in range(306, 406):  # writes again, then reads: the trims go on from where they stopped
            await _call(store, "reads", n)
        for n in range(406, 506):
            await _call(store, "reads", n, write=False)
        await store.purge_expired()
        steps, entries, versions = await _steps(store, "reads")
        assert versions == 106 and entries <= HISTORY + TRIM_EVERY + 105
        assert [h["n"] for h in await store.history("reads", 1000, 0)] == list(range(466, 506))
        assert await store.state_at("reads", 105, 105) == {"n": 405}
        assert await store.state_at("reads", 3, 105) == {"n": 3}
    finally:
        await store.close()


async def test_a_pending_group_spares_a_session_made_again_under_the_same_id(tmp_path: Path) -> None:
    store = await _open(tmp_path / "s.db")
    try:
        await store.create(SessionRecord(id="again", state={"n": 0}))
        for n in range(1, 3 * TRIM_EVERY + 1):
            await _call(store, "again", n)
        assert store._trims == {"again"} and store._trim_rows >= store._trim_group  # the next write deletes them
        assert await store.delete("again")
        await store.create(SessionRecord(id="again", state={"n": 0}))
        for n in range(1, 6):
            await _call(store, "again", n)  # the first of these carries the pending group
        assert not store._trims
        assert [h["n"] for h in await store.history("again", 100, 0)] == [1, 2, 3, 4, 5]
        assert await _steps(store, "again") == (6, 5, 6)
    finally:
        await store.close()


async def test_close_deletes_what_is_pending(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await _open(path, versions=20)  # the history window decides
    await store.create(SessionRecord(id="c", state={"n": 0}))
    for n in range(1, 4 * TRIM_EVERY + 1):  # ends on a call that makes its old rows pending
        await _call(store, "c", n)
    assert store._trims and (await _steps(store, "c"))[1] > HISTORY
    await store.close()
    store = await _open(path, versions=20)
    try:
        assert (await _steps(store, "c"))[1] == HISTORY
    finally:
        await store.close()
