"""A session file of layout 4 opens as layout 5 with its sessions kept: 5 only dropped an index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gecko.sessions.model import Commit, SessionRecord
from gecko.sessions.sqlite import SCHEMA_VERSION
from gecko.sessions.store import open_store


def _indexes(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL")}


def _user_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


async def _write_versions(store, session_id: str, count: int) -> None:
    for number in range(count):
        hold = await store.acquire(session_id)
        try:
            record = await store.read(hold)
            state = {**record.state, "n": number}
            await store.commit(hold, record, Commit(history={"call": number}, state=state,
                                                    patch=[{"op": "replace", "path": "/n", "value": number}]))
        finally:
            await store.release(hold)


async def test_a_layout_4_file_keeps_its_sessions_and_loses_the_checkpoint_index(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = open_store("sqlite", sqlite_path=path, ttl=60, checkpoint_every=2)
    await store.open()
    try:
        await store.create(SessionRecord(id="kept", state={"n": -1, "pad": "x" * 50}))
        await _write_versions(store, "kept", 7)
    finally:
        await store.close()
    with sqlite3.connect(path, isolation_level=None) as conn:  # what layout 4 had
        conn.execute("CREATE INDEX versions_checkpoints ON versions(session_id, checkpoint, version)")
        conn.execute("PRAGMA user_version=4")
        checkpoints = [r[0] for r in conn.execute("SELECT version FROM versions WHERE checkpoint=1 ORDER BY version")]
    assert len(checkpoints) > 2 and checkpoints[-1] < 7, checkpoints  # rebuilds below start mid-chain
    assert "versions_checkpoints" in _indexes(path)

    store = open_store("sqlite", sqlite_path=path, ttl=60, checkpoint_every=2)
    await store.open()
    try:
        assert _user_version(path) == SCHEMA_VERSION == 5
        assert "versions_checkpoints" not in _indexes(path)
        record = await store.get("kept")
        assert record is not None and record.state == {"n": 6, "pad": "x" * 50} and record.version == 7
        assert [(await store.state_at("kept", v, 7))["n"] for v in range(8)] == [-1, 0, 1, 2, 3, 4, 5, 6]
    finally:
        await store.close()
