"""SQLite session store (WAL mode): the default, shared by all worker processes of one host.

- Reads run inline on the event loop (indexed WAL reads never wait for writers; see `_read`).
- Writes go through one writer thread per process with group commit (`sqlite_writer.Writer`).
- Exclusive calls are serialised across processes with a POSIX record lock on one byte of a lock
  file (byte = hash of the session id): no database write to take or release it, and the kernel
  releases it if a worker dies. `_held` keeps two sessions whose ids hash to the same byte from
  sharing the process's lock. Optimistic calls take no lock (a lock syscall hands the GIL to the
  writer thread and costs more than the whole rules pipeline); the version check catches races.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from gecko.sessions.model import Commit, SessionRecord, VersionConflict
from gecko.sessions.sqlite_writer import Writer, connect
from gecko.sessions.store import WORKER_LIVE_SECONDS, SessionStore
from utils.jsonutil import dumps_compact, loads

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, created REAL, updated REAL, expires REAL, version INTEGER,
    config TEXT, state TEXT, checklists TEXT);
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions(expires);
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, entry TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS history_session ON history(session_id, id);
CREATE TABLE IF NOT EXISTS snapshots (
    session_id TEXT NOT NULL, version INTEGER NOT NULL, state TEXT NOT NULL,
    PRIMARY KEY (session_id, version));
CREATE TABLE IF NOT EXISTS workers (id TEXT PRIMARY KEY, seen REAL);
"""
LOCK_SLOTS = 1 << 30


_dumps = dumps_compact


def _slot(session_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(session_id.encode(), digest_size=8).digest(), "big") % LOCK_SLOTS


class SqliteStore(SessionStore):
    """Sessions in one SQLite file (WAL, synchronous=NORMAL)."""

    backend = "sqlite"

    def __init__(self, path: Path | str, ttl: float, history_limit: int = 1000) -> None:
        super().__init__(ttl, history_limit)
        self.path = Path(path)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._writer: Writer | None = None
        self._lock_fd: int | None = None
        self._held: dict[int, str] = {}

    # -- plumbing --------------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, busy_timeout_ms=30000)  # readers: rare waits during WAL recovery
            self._local.conn = conn
            with self._guard:
                self._connections.append(conn)
        return conn

    async def _read(self, sql: str, params: tuple) -> list[tuple]:
        # Deliberately on the event-loop thread: an indexed read of a local WAL database takes tens of
        # microseconds and never waits for writers, while a thread hop costs more than the query itself.
        # Writes, which can wait for the write lock, run on the writer thread.
        return self._conn().execute(sql, params).fetchall()

    async def _write(self, func: Any, *args: Any) -> Any:
        assert self._writer is not None, "store not opened"
        return await self._writer.submit(func, *args)

    # -- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(self._create_tables)
        self._writer = Writer(self.path)
        self._lock_fd = os.open(f"{self.path}.locks", os.O_RDWR | os.O_CREAT, 0o600)

    def _create_tables(self) -> None:
        conn = connect(self.path, busy_timeout_ms=30000)
        try:
            for _ in range(200):  # another worker may be creating the same tables
                try:
                    conn.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;")
                    return
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                    time.sleep(0.05)
        finally:
            conn.close()

    async def close(self) -> None:
        if self._writer is not None:
            await asyncio.to_thread(self._writer.close)
            self._writer = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
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
        await self._write(_insert_session, record)

    @staticmethod
    def _record(row: tuple) -> SessionRecord:
        sid, created, updated, expires, version, config, state, checklists = row[:8]
        return SessionRecord(sid, loads(config), loads(state), version, loads(checklists),
                             created, updated, expires)

    async def get(self, session_id: str) -> SessionRecord | None:
        rows = await self._read("SELECT * FROM sessions WHERE id=? AND expires>=?", (session_id, time.time()))
        return self._record(rows[0]) if rows else None

    async def delete(self, session_id: str) -> bool:
        return await self._write(_delete_session, session_id)

    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        rows = await self._read(
            "SELECT entry FROM (SELECT id, entry FROM history WHERE session_id=? ORDER BY id DESC LIMIT ?) "
            "ORDER BY id LIMIT ? OFFSET ?", (session_id, self.history_limit or -1, limit, offset))
        return [loads(r[0]) for r in rows]

    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        rows = await self._read("SELECT entry FROM history WHERE session_id=? ORDER BY id DESC LIMIT ?",
                                (session_id, limit))
        return [loads(r[0]) for r in reversed(rows)]

    async def snapshot(self, session_id: str, version: int) -> dict[str, Any] | None:
        rows = await self._read("SELECT state FROM snapshots WHERE session_id=? AND version=?", (session_id, version))
        return loads(rows[0][0]) if rows else None

    async def count(self) -> int:
        rows = await self._read("SELECT COUNT(*) FROM sessions WHERE expires>=?", (time.time(),))
        return int(rows[0][0])

    async def purge_expired(self) -> int:
        return await self._write(_purge, time.time())

    # -- serialisation of one session's calls -----------------------------------------------
    def _try_lock(self, session_id: str, owner: str) -> bool:
        slot = _slot(session_id)
        if slot in self._held:
            return False
        try:
            fcntl.lockf(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
        except OSError:
            return False
        self._held[slot] = owner
        return True

    def _unlock(self, session_id: str, owner: str) -> None:
        slot = _slot(session_id)
        if self._held.get(slot) == owner:
            del self._held[slot]
            fcntl.lockf(self._lock_fd, fcntl.LOCK_UN, 1, slot)

    async def _try_begin(self, session_id: str, owner: str, exclusive: bool) -> SessionRecord | None | bool:
        if not exclusive:
            return await self.get(session_id)
        if not self._try_lock(session_id, owner):
            return False
        try:
            record = await self.get(session_id)
        except BaseException:
            self._unlock(session_id, owner)
            raise
        if record is None:
            self._unlock(session_id, owner)
        return record

    async def finish(self, session_id: str, owner: str, expected_version: int, commit: Commit) -> int:
        try:
            version = await self._write(_finish, session_id, expected_version, commit, self.ttl, self.history_limit)
        finally:
            self._unlock(session_id, owner)
        if version < 0:
            raise VersionConflict(f"session {session_id} changed during the call (expected version {expected_version})")
        return version

    async def abort(self, session_id: str, owner: str) -> None:
        self._unlock(session_id, owner)

    # -- workers ---------------------------------------------------------------------------
    async def heartbeat(self) -> None:
        await self._write(lambda conn, wid, now: conn.execute("INSERT OR REPLACE INTO workers VALUES (?,?)",
                                                               (wid, now)), self.worker_id, time.time())

    async def live_workers(self) -> int:
        rows = await self._read("SELECT COUNT(*) FROM workers WHERE seen>=?", (time.time() - WORKER_LIVE_SECONDS,))
        return int(rows[0][0])


# -- statements run on the writer thread (inside a transaction) ------------------------------
def _insert_session(conn: sqlite3.Connection, r: SessionRecord) -> None:
    conn.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?)",
                 (r.id, r.created, r.updated, r.expires, r.version, _dumps(r.config), _dumps(r.state),
                  _dumps(r.checklists)))
    conn.execute("INSERT INTO snapshots VALUES (?,?,?)", (r.id, r.version, _dumps(r.state)))


def _delete_session(conn: sqlite3.Connection, session_id: str) -> bool:
    existed = conn.execute("DELETE FROM sessions WHERE id=? AND expires>=?", (session_id, time.time())).rowcount > 0
    conn.execute("DELETE FROM sessions WHERE id=?", (session_id,))
    conn.execute("DELETE FROM history WHERE session_id=?", (session_id,))
    conn.execute("DELETE FROM snapshots WHERE session_id=?", (session_id,))
    return existed


def _purge(conn: sqlite3.Connection, now: float) -> int:
    gone = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE expires<?", (now,)).fetchall()]
    for sid in gone:
        conn.execute("DELETE FROM sessions WHERE id=?", (sid,))
        conn.execute("DELETE FROM history WHERE session_id=?", (sid,))
        conn.execute("DELETE FROM snapshots WHERE session_id=?", (sid,))
    return len(gone)


def _finish(conn: sqlite3.Connection, session_id: str, expected: int, commit: Commit, ttl: float,
            history_limit: int) -> int:
    now = time.time()
    version = expected + (commit.state is not None)
    sets = ["updated=?", "expires=?", "version=?"]
    values: list[Any] = [now, now + ttl, version]
    state_text = _dumps(commit.state) if commit.state is not None else None
    if state_text is not None:
        sets.append("state=?")
        values.append(state_text)
    if commit.checklists is not None:
        sets.append("checklists=?")
        values.append(_dumps(commit.checklists))
    if commit.config is not None:
        sets.append("config=?")
        values.append(_dumps(commit.config))
    updated = conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id=? AND version=?",  # noqa: S608
                           (*values, session_id, expected)).rowcount
    if updated == 0:
        return -1
    if state_text is not None:
        conn.execute("INSERT OR REPLACE INTO snapshots VALUES (?,?,?)", (session_id, version, state_text))
    if commit.history is not None:
        cur = conn.execute("INSERT INTO history (session_id, entry) VALUES (?,?)", (session_id, _dumps(commit.history)))
        if history_limit and cur.lastrowid and cur.lastrowid % 64 == 0:
            _trim(conn, session_id, history_limit)
    return version


def _trim(conn: sqlite3.Connection, session_id: str, limit: int) -> None:
    conn.execute("DELETE FROM history WHERE session_id=? AND id < (SELECT id FROM history WHERE session_id=? "
                 "ORDER BY id DESC LIMIT 1 OFFSET ?)", (session_id, session_id, limit - 1))
    conn.execute("DELETE FROM snapshots WHERE session_id=? AND version < (SELECT version FROM snapshots "
                 "WHERE session_id=? ORDER BY version DESC LIMIT 1 OFFSET ?)", (session_id, session_id, limit - 1))
