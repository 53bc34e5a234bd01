"""SQLite deletes out-of-window history and versions in groups (`TRIM_GROUP_ROWS`), many sessions per transaction:
reads never show those rows, storage stays bounded, and a group acts on the records as they stand."""

from __future__ import annotations

from pathlib import Path

from gecko.sessions import Commit, SessionRecord, open_store
from gecko.sessions.sqlite import SqliteStore
from gecko.sessions.versions import TRIM_EVERY

HISTORY = 40
VERSIONS = 48


async def _open(path: Path) -> SqliteStore:
    store = open_store("sqlite", sqlite_path=path, ttl=60, history_limit=HISTORY, max_versions=VERSIONS,
                       checkpoint_every=4)
    assert isinstance(store, SqliteStore)
    await store.open()
    return store


async def _call(store: SqliteStore, session_id: str, n: int) -> None:
    async with store.holding(session_id) as hold:
        await store.commit(hold, await store.read(hold), Commit(
            history={"n": n}, state={"n": n}, patch=[{"op": "replace", "path": "/n", "value": n}]))


async def _rows(store: SqliteStore, session_id: str) -> tuple[int, int]:
    history = await store._read("SELECT COUNT(*) FROM history WHERE session_id=?", (session_id,))
    versions = await store._read("SELECT COUNT(*) FROM versions WHERE session_id=?", (session_id,))
    return history[0][0], versions[0][0]


async def test_old_rows_go_in_groups_and_reads_show_only_the_window(tmp_path: Path) -> None:
    store = await _open(tmp_path / "s.db")
    group = max(TRIM_EVERY, min(HISTORY, VERSIONS))
    try:
        ids = [f"t{i}" for i in range(3)]
        for sid in ids:
            await store.create(SessionRecord(id=sid, state={"n": 0}))
        most_history = most_versions = 0
        for n in range(1, 201):
            for sid in ids:
                await _call(store, sid, n)
                history_rows, version_rows = await _rows(store, sid)
                most_history, most_versions = max(most_history, history_rows), max(most_versions, version_rows)
        # a session keeps at most a group beyond its window (and, for versions, back to a checkpoint)
        assert HISTORY < most_history <= HISTORY + group + TRIM_EVERY, most_history
        assert most_versions <= VERSIONS + group + TRIM_EVERY + 4, most_versions
        for sid in ids:
            assert [h["n"] for h in await store.history(sid, 1000, 0)] == list(range(161, 201))
            assert [h["n"] for h in await store.history_tail(sid, 1000)] == list(range(161, 201))
            assert (await store.state_at(sid, 200 - VERSIONS + 1, 200)) == {"n": 200 - VERSIONS + 1}
        await store.purge_expired()  # the sweep deletes what is pending
        for sid in ids:
            history_rows, version_rows = await _rows(store, sid)
            assert history_rows <= HISTORY + TRIM_EVERY and version_rows <= VERSIONS + TRIM_EVERY + 4
    finally:
        await store.close()


async def test_a_pending_group_spares_a_session_made_again_under_the_same_id(tmp_path: Path) -> None:
    store = await _open(tmp_path / "s.db")
    try:
        await store.create(SessionRecord(id="again", state={"n": 0}))
        for n in range(1, 2 * TRIM_EVERY + 1):
            await _call(store, "again", n)
        assert store._trims == {"again"}  # out of the window, pending
        assert await store.delete("again")
        await store.create(SessionRecord(id="again", state={"n": 0}))
        for n in range(1, 6):
            await _call(store, "again", n)  # the first of these carries the pending group
        assert not store._trims
        assert [h["n"] for h in await store.history("again", 100, 0)] == [1, 2, 3, 4, 5]
        assert await _rows(store, "again") == (5, 6)
    finally:
        await store.close()


async def test_close_deletes_what_is_pending(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await _open(path)
    await store.create(SessionRecord(id="c", state={"n": 0}))
    for n in range(1, HISTORY + TRIM_EVERY + 1):
        await _call(store, "c", n)
    assert store._trims
    await store.close()
    store = await _open(path)
    try:
        assert (await _rows(store, "c"))[0] == HISTORY
    finally:
        await store.close()
