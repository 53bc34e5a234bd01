"""SQLite gives swept space back (issue 31.7): incremental auto_vacuum in every file, old files migrated."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from gecko.sessions.model import SessionRecord
from gecko.sessions.store import open_store


def _auto_vacuum(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA auto_vacuum").fetchone()[0])


def _checkpointed_size(path: Path) -> int:
    """The file's size once the WAL is written back (a checkpoint is where freed pages leave the file)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


async def test_a_new_file_shrinks_after_a_sweep(tmp_path: Path):
    path = tmp_path / "sessions.db"
    store = open_store("sqlite", sqlite_path=path, ttl=0.2)
    await store.open()
    try:
        assert _auto_vacuum(path) == 2  # INCREMENTAL
        blob = "x" * 20_000
        for index in range(150):
            await store.create(SessionRecord(id=f"s{index}", state={"blob": blob, "i": index}))
        full = _checkpointed_size(path)
        await asyncio.sleep(0.4)
        assert await store.purge_expired() == 150
        assert _checkpointed_size(path) < full / 4, (_checkpointed_size(path), full)
    finally:
        await store.close()


async def test_a_file_made_without_auto_vacuum_is_migrated_at_open(tmp_path: Path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path, isolation_level=None) as conn:  # what every Gecko made before: WAL set first
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("CREATE TABLE unrelated (x)")
    assert _auto_vacuum(path) == 0
    store = open_store("sqlite", sqlite_path=path, ttl=60)
    await store.open()
    try:
        assert _auto_vacuum(path) == 2
        await store.create(SessionRecord(id=f"kept-{time.time_ns()}", state={}))
        assert await store.count() == 1
    finally:
        await store.close()
