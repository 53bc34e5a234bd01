"""A session file of layout 4 or 5 opens as layout 6 with its sessions kept: their history and versions become steps."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from gecko.sessions.model import Commit
from gecko.sessions.sqlite import SCHEMA_VERSION, SqliteStore
from gecko.sessions.store import open_store

LAYOUT_4 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, created REAL, updated REAL, expires REAL, version INTEGER, calls INTEGER,
    config TEXT, checklists TEXT, status TEXT NOT NULL DEFAULT 'new', tags TEXT NOT NULL DEFAULT '[]',
    base_version INTEGER NOT NULL DEFAULT 0, base_bytes INTEGER NOT NULL DEFAULT 0, delta_bytes INTEGER NOT NULL DEFAULT 0);
CREATE INDEX sessions_expires ON sessions(expires);
CREATE INDEX sessions_created ON sessions(created, id);
CREATE INDEX sessions_status ON sessions(status, created, id);
CREATE TABLE tags (tag TEXT NOT NULL, created REAL NOT NULL, session_id TEXT NOT NULL);
CREATE UNIQUE INDEX tags_order ON tags(tag, created, session_id);
CREATE INDEX tags_session ON tags(session_id);
CREATE TABLE history (session_id TEXT NOT NULL, seq INTEGER NOT NULL, entry TEXT NOT NULL);
CREATE UNIQUE INDEX history_seq ON history(session_id, seq);
CREATE TABLE versions (
    session_id TEXT NOT NULL, version INTEGER NOT NULL, checkpoint INTEGER NOT NULL, body TEXT NOT NULL);
CREATE UNIQUE INDEX versions_number ON versions(session_id, version);
CREATE INDEX versions_checkpoints ON versions(session_id, checkpoint, version);
CREATE TABLE workers (id TEXT PRIMARY KEY, seen REAL);
"""


def _old_layout_file(path: Path, now: float, layout: int) -> None:
    """Two sessions as layout 4 (or 5: the same without the index of checkpoints) stored them: `kept` at version 3
    (checkpoints at 0 and 2, deltas at 1 and 3) after three calls, and `other` at version 0."""
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(LAYOUT_4)
        if layout == 5:
            conn.execute("DROP INDEX versions_checkpoints")
        conn.execute(f"PRAGMA user_version={layout}")
        for sid, version, calls, tags in (("kept", 3, 3, ["t"]), ("other", 0, 0, [])):
            conn.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         (sid, now, now, now + 600, version, calls, json.dumps({"toolkits": ["x"]}), "{}", "active",
                          json.dumps(tags), 2 if version else 0, 10, 0))
        conn.execute("INSERT INTO tags VALUES ('t', ?, 'kept')", (now,))
        conn.execute("INSERT INTO versions VALUES ('other', 0, 1, ?)", (json.dumps({"o": 1}),))
        for version, checkpoint, body in ((0, 1, {"n": 0}), (1, 0, [{"op": "replace", "path": "/n", "value": 1}]),
                                          (2, 1, {"n": 2}), (3, 0, [{"op": "replace", "path": "/n", "value": 3}])):
            conn.execute("INSERT INTO versions VALUES ('kept', ?, ?, ?)", (version, checkpoint, json.dumps(body)))
        for seq in (3, 1, 2):  # stored out of order: the migration orders them
            conn.execute("INSERT INTO history VALUES ('kept', ?, ?)", (seq, json.dumps({"call": seq})))


def _names(path: Path, kind: str) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type=? AND sql IS NOT NULL", (kind,))}


@pytest.mark.parametrize("layout", [4, 5])
async def test_an_older_layout_keeps_its_sessions(tmp_path: Path, layout: int) -> None:
    path = tmp_path / "sessions.db"
    _old_layout_file(path, time.time(), layout)
    store = open_store("sqlite", sqlite_path=path, ttl=600)
    assert isinstance(store, SqliteStore)
    await store.open()
    try:
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
        assert {"sessions", "steps", "tags", "workers"} <= _names(path, "table")
        assert not {"history", "versions"} & _names(path, "table")
        assert {"steps_session", "sessions_expires", "tags_order"} <= _names(path, "index")
        record = await store.get("kept")
        assert record is not None
        assert (record.state, record.version, record.calls, record.tags) == ({"n": 3}, 3, 3, ["t"])
        assert [await store.state_at("kept", v, 3) for v in range(4)] == [{"n": v} for v in range(4)]
        assert [h["call"] for h in await store.history("kept", 10, 0)] == [1, 2, 3]
        other = await store.get("other")
        assert other is not None and other.state == {"o": 1}
        async with store.holding("kept") as hold:  # and it goes on from there
            read = await store.read(hold)
            assert read is not None
            await store.commit(hold, read, Commit(history={"call": 4}, state={"n": 4},
                                                  patch=[{"op": "replace", "path": "/n", "value": 4}]))
        assert [h["call"] for h in await store.history_tail("kept", 2)] == [3, 4]
        assert await store.state_at("kept", 4, 4) == {"n": 4}
        assert await store.delete("kept") and await store.get("kept") is None
        assert await store.history("kept", 10, 0) == []
        other = await store.get("other")
        assert other is not None and other.state == {"o": 1}
    finally:
        await store.close()
