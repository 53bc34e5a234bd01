"""SQLite session store (WAL mode): the default, shared by all worker processes of one host.

Every statement runs in a worker thread (`asyncio.to_thread`) on a per-thread connection, so the
event loop never blocks on disk. Each public call is one transaction.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from gecko.sessions.model import Commit, SessionRecord, VersionConflict
from gecko.sessions.store import LEASE_SECONDS, WORKER_LIVE_SECONDS, SessionStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, created REAL, updated REAL, expires REAL, version INTEGER,
    config TEXT, state TEXT, checklists TEXT, lock_owner TEXT, lock_expires REAL);
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions(expires);
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, entry TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS history_session ON history(session_id, id);
CREATE TABLE IF NOT EXISTS snapshots (
    session_id TEXT NOT NULL, version INTEGER NOT NULL, state TEXT NOT NULL,
    PRIMARY KEY (session_id, version));
CREATE TABLE IF NOT EXISTS workers (id TEXT PRIMARY KEY, seen REAL);
"""


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class SqliteStore(SessionStore):
    """Sessions in one SQLite file (WAL, synchronous=NORMAL)."""

    backend = "sqlite"

    def __init__(self, path: Path | str, ttl: float, history_limit: int = 1000) -> None:
        super().__init__(ttl, history_limit)
        self.path = Path(path)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._guard = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
            with self._guard:
                self._connections.append(conn)
        return conn

    async def _run(self, func: Any, *args: Any) -> Any:
        return await asyncio.to_thread(func, *args)

    # -- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        await self._run(self._open_sync)

    def _open_sync(self) -> None:
        conn = self._conn()
        for _ in range(50):
            try:
                conn.executescript(_SCHEMA)
                return
            except sqlite3.OperationalError as exc:  # another worker creating the same tables
                if "locked" not in str(exc):
                    raise
                time.sleep(0.05)

    async def close(self) -> None:
        with self._guard:
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._connections.clear()

    # -- records ---------------------------------------------------------------------------
    async def create(self, record: SessionRecord) -> None:
        record.expires = self.expiry()
        await self._run(self._create_sync, record)

    def _create_sync(self, r: SessionRecord) -> None:
        conn = self._conn()
        with _tx(conn):
            conn.execute(
                "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,NULL,NULL)",
                (r.id, r.created, r.updated, r.expires, r.version, _dumps(r.config), _dumps(r.state),
                 _dumps(r.checklists)),
            )
            conn.execute("INSERT INTO snapshots VALUES (?,?,?)", (r.id, r.version, _dumps(r.state)))

    @staticmethod
    def _record(row: tuple) -> SessionRecord:
        sid, created, updated, expires, version, config, state, checklists = row[:8]
        return SessionRecord(sid, json.loads(config), json.loads(state), version, json.loads(checklists),
                             created, updated, expires)

    async def get(self, session_id: str) -> SessionRecord | None:
        return await self._run(self._get_sync, session_id)

    def _get_sync(self, session_id: str) -> SessionRecord | None:
        row = self._conn().execute(
            "SELECT * FROM sessions WHERE id=? AND expires>=?", (session_id, time.time())
        ).fetchone()
        return self._record(row) if row else None

    async def delete(self, session_id: str) -> bool:
        return await self._run(self._delete_sync, session_id)

    def _delete_sync(self, session_id: str) -> bool:
        conn = self._conn()
        with _tx(conn):
            cur = conn.execute("DELETE FROM sessions WHERE id=? AND expires>=?", (session_id, time.time()))
            existed = cur.rowcount > 0
            conn.execute("DELETE FROM history WHERE session_id=?", (session_id,))
            conn.execute("DELETE FROM snapshots WHERE session_id=?", (session_id,))
        return existed

    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        rows = await self._run(
            lambda: self._conn().execute(
                "SELECT entry FROM (SELECT id, entry FROM history WHERE session_id=? ORDER BY id DESC LIMIT ?) "
                "ORDER BY id LIMIT ? OFFSET ?",
                (session_id, self.history_limit or -1, limit, offset),
            ).fetchall()
        )
        return [json.loads(r[0]) for r in rows]

    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        rows = await self._run(
            lambda: self._conn().execute(
                "SELECT entry FROM history WHERE session_id=? ORDER BY id DESC LIMIT ?", (session_id, limit)
            ).fetchall()
        )
        return [json.loads(r[0]) for r in reversed(rows)]

    async def snapshot(self, session_id: str, version: int) -> dict[str, Any] | None:
        row = await self._run(
            lambda: self._conn().execute(
                "SELECT state FROM snapshots WHERE session_id=? AND version=?", (session_id, version)
            ).fetchone()
        )
        return json.loads(row[0]) if row else None

    async def count(self) -> int:
        row = await self._run(
            lambda: self._conn().execute("SELECT COUNT(*) FROM sessions WHERE expires>=?", (time.time(),)).fetchone()
        )
        return int(row[0])

    async def purge_expired(self) -> int:
        return await self._run(self._purge_sync)

    def _purge_sync(self) -> int:
        conn = self._conn()
        now = time.time()
        with _tx(conn):
            gone = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE expires<?", (now,)).fetchall()]
            for sid in gone:
                conn.execute("DELETE FROM sessions WHERE id=?", (sid,))
                conn.execute("DELETE FROM history WHERE session_id=?", (sid,))
                conn.execute("DELETE FROM snapshots WHERE session_id=?", (sid,))
        return len(gone)

    # -- the lease -------------------------------------------------------------------------
    async def _try_begin(self, session_id: str, owner: str) -> SessionRecord | None | bool:
        return await self._run(self._begin_sync, session_id, owner)

    def _begin_sync(self, session_id: str, owner: str) -> SessionRecord | None | bool:
        conn = self._conn()
        now = time.time()
        with _tx(conn):
            cur = conn.execute(
                "UPDATE sessions SET lock_owner=?, lock_expires=? WHERE id=? AND expires>=? "
                "AND (lock_owner IS NULL OR lock_expires<?)",
                (owner, now + LEASE_SECONDS, session_id, now, now),
            )
            if cur.rowcount == 0:
                row = conn.execute("SELECT 1 FROM sessions WHERE id=? AND expires>=?", (session_id, now)).fetchone()
                return False if row else None
            row = conn.execute("SELECT * FROM sessions WHERE id=?", (session_id,)).fetchone()
        return self._record(row)

    async def finish(self, session_id: str, owner: str, expected_version: int, commit: Commit) -> int:
        version = await self._run(self._finish_sync, session_id, owner, expected_version, commit)
        if version < 0:
            raise VersionConflict(f"session {session_id} changed during the call (expected version {expected_version})")
        return version

    def _finish_sync(self, session_id: str, owner: str, expected: int, commit: Commit) -> int:
        conn = self._conn()
        now = time.time()
        with _tx(conn):
            row = conn.execute("SELECT version FROM sessions WHERE id=?", (session_id,)).fetchone()
            if row is None or row[0] != expected:
                conn.execute("UPDATE sessions SET lock_owner=NULL WHERE id=? AND lock_owner=?", (session_id, owner))
                return -1
            version = expected + (commit.state is not None)
            sets = ["updated=?", "expires=?", "version=?", "lock_owner=NULL", "lock_expires=NULL"]
            values: list[Any] = [now, now + self.ttl, version]
            if commit.state is not None:
                sets.append("state=?")
                values.append(_dumps(commit.state))
                conn.execute("INSERT OR REPLACE INTO snapshots VALUES (?,?,?)",
                             (session_id, version, _dumps(commit.state)))
            if commit.checklists is not None:
                sets.append("checklists=?")
                values.append(_dumps(commit.checklists))
            if commit.config is not None:
                sets.append("config=?")
                values.append(_dumps(commit.config))
            conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id=?", (*values, session_id))  # noqa: S608
            if commit.history is not None:
                cur = conn.execute("INSERT INTO history (session_id, entry) VALUES (?,?)",
                                   (session_id, _dumps(commit.history)))
                if self.history_limit and cur.lastrowid and cur.lastrowid % 64 == 0:
                    self._trim(conn, session_id)
        return version

    def _trim(self, conn: sqlite3.Connection, session_id: str) -> None:
        conn.execute(
            "DELETE FROM history WHERE session_id=? AND id < (SELECT id FROM history WHERE session_id=? "
            "ORDER BY id DESC LIMIT 1 OFFSET ?)", (session_id, session_id, self.history_limit - 1))
        conn.execute(
            "DELETE FROM snapshots WHERE session_id=? AND version < (SELECT version FROM snapshots "
            "WHERE session_id=? ORDER BY version DESC LIMIT 1 OFFSET ?)", (session_id, session_id, self.history_limit - 1))

    async def abort(self, session_id: str, owner: str) -> None:
        await self._run(
            lambda: self._conn().execute(
                "UPDATE sessions SET lock_owner=NULL, lock_expires=NULL WHERE id=? AND lock_owner=?", (session_id, owner)
            )
        )

    # -- workers ---------------------------------------------------------------------------
    async def heartbeat(self) -> None:
        await self._run(
            lambda: self._conn().execute(
                "INSERT OR REPLACE INTO workers VALUES (?,?)", (self.worker_id, time.time())
            )
        )

    async def live_workers(self) -> int:
        row = await self._run(
            lambda: self._conn().execute(
                "SELECT COUNT(*) FROM workers WHERE seen>=?", (time.time() - WORKER_LIVE_SECONDS,)
            ).fetchone()
        )
        return int(row[0])


class _tx:
    """`BEGIN IMMEDIATE … COMMIT/ROLLBACK` on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")

