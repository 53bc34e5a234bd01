"""SQLite session store (WAL mode): the default, shared by all worker processes of one host.

- Reads run inline on the event loop (indexed WAL reads never wait for writers; see `_read`).
- Writes go through one writer thread per process with group commit (`sqlite_writer.Writer`).
- The session lease is a POSIX record lock on one byte of a lock file (byte = hash of the session
  id): no database write to take or release it, and the kernel releases it the moment a worker
  dies, so a `kill -9`'d holder blocks nobody. A process waiting for a lease holds a shared lock on
  a second byte, which the holder tests when its turn ends (see `gecko.sessions.store`). `_held`
  keeps two sessions whose ids hash to the same byte from sharing the process's lock.
- Tables: `sessions` (the current record, with its status and tags, and where its last checkpoint is; not
  the state itself, which the versions hold), `steps` (one row per commit that stored something: the call's
  history entry, numbered per session, and the new state version, a checkpoint or a JSON-Patch delta, see
  `gecko.sessions.versions`; in commit order per session), `tags` (one row
  per session and tag, ordered by creation time: what listings walk, see `gecko.sessions.listing`). The file uses
  incremental auto-vacuum, so the sweep gives the pages of purged sessions back to the file system.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from gecko.sessions.listing import MAX_SCAN, SessionPage, SessionQuery, SessionSummary, page_of
from gecko.sessions.model import Commit, SessionBusy, SessionNotFound, SessionRecord, VersionConflict
from gecko.sessions.sqlite_writer import Writer, connect
from gecko.sessions.store import READ_ATTEMPTS, WORKER_LIVE_SECONDS, SessionStore
from gecko.sessions.versions import TRIM_EVERY, Retention
from utils.jsonutil import dumps_compact, loads

log = logging.getLogger(__name__)
SCHEMA_VERSION = 6
_TABLES = ("sessions", "history", "snapshots", "versions", "steps", "workers", "tags")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, created REAL, updated REAL, expires REAL, version INTEGER, calls INTEGER,
    config TEXT, checklists TEXT, status TEXT NOT NULL DEFAULT 'new', tags TEXT NOT NULL DEFAULT '[]',
    base_version INTEGER NOT NULL DEFAULT 0, base_bytes INTEGER NOT NULL DEFAULT 0, delta_bytes INTEGER NOT NULL DEFAULT 0,
    trim_calls INTEGER NOT NULL DEFAULT 0, trim_versions INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions(expires);
CREATE INDEX IF NOT EXISTS sessions_created ON sessions(created, id);
CREATE INDEX IF NOT EXISTS sessions_status ON sessions(status, created, id);
CREATE TABLE IF NOT EXISTS tags (tag TEXT NOT NULL, created REAL NOT NULL, session_id TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS tags_order ON tags(tag, created, session_id);
CREATE INDEX IF NOT EXISTS tags_session ON tags(session_id);
CREATE TABLE IF NOT EXISTS steps (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER, version INTEGER, checkpoint INTEGER, entry TEXT,
    body TEXT);
CREATE INDEX IF NOT EXISTS steps_session ON steps(session_id);
CREATE INDEX IF NOT EXISTS steps_checkpoints ON steps(session_id, version) WHERE checkpoint=1;
CREATE TABLE IF NOT EXISTS workers (id TEXT PRIMARY KEY, seen REAL);
"""
LOCK_SLOTS = 1 << 30
_NOTHING = 0
_EVERYTHING = 1 << 62
"""Row-id bounds of `_trim`: no row is below 0, every row is below 2**62."""
TRIM_GROUP_ROWS = 1024
"""Steps that fell out of their windows are deleted in groups of about this many (or the smaller window), for many
sessions in one transaction. Steps are stored in the order they were written, so the sessions written together
share pages: deleting their old steps together rewrites each page once, where deleting them session by session
rewrote a page per row (a third of the bytes a write cost, once a session passed its window). Until then a session
keeps up to a group more than its windows; reads never show those steps."""
VACUUM_PAGES = 2000
"""Free pages given back to the file system per sweep."""


_dumps = dumps_compact
_RECORD_COLUMNS = ("id, created, updated, expires, version, calls, config, checklists, status, tags, base_version, "
                   "base_bytes, delta_bytes")
_SUMMARY_COLUMNS = "s.id, s.created, s.updated, s.status, s.calls, s.version, s.config, s.tags"


def _slot(session_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(session_id.encode(), digest_size=8).digest(), "big") % LOCK_SLOTS


class StoreFull(OSError):
    """The disk under the session file is full: writes fail until space is freed (the API answers 503, retryable)."""


def _is_full(exc: sqlite3.OperationalError) -> bool:
    return exc.sqlite_errorcode == sqlite3.SQLITE_FULL or "disk is full" in str(exc)


class SqliteStore(SessionStore):
    """Sessions in one SQLite file (WAL, synchronous=NORMAL)."""

    backend = "sqlite"
    unavailable_errors = (StoreFull,)
    writes_in_order = True  # every write of the process goes through one writer thread's queue, in order

    def __init__(self, path: Path | str, retention: Retention) -> None:
        super().__init__(retention)
        self.path = Path(path)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._writer: Writer | None = None
        self._lock_fd: int | None = None
        self._held: dict[int, str] = {}
        self._waiting: set[int] = set()
        """Slots whose 'waiting' byte this process holds (shared)."""
        self._trims: set[str] = set()
        """Sessions with rows out of their window, deleted with the next group (see `TRIM_GROUP_ROWS`)."""
        self._trim_rows = 0
        windows = [n for n in (retention.history_limit, retention.max_versions) if n]
        self._trim_group = max(TRIM_EVERY, min([TRIM_GROUP_ROWS, *windows]))

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
        try:
            return await self._writer.submit(func, *args)
        except sqlite3.OperationalError as exc:
            if _is_full(exc):
                raise StoreFull(f"the disk of the session store {self.path} is full; free space and retry") from None
            raise

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
                    conn.execute("BEGIN IMMEDIATE")
                    _migrate(conn)
                    conn.execute("COMMIT")
                    _auto_vacuum(conn, self.path)
                    return
                except sqlite3.OperationalError as exc:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                    time.sleep(0.05)
        finally:
            conn.close()

    async def close(self) -> None:
        if self._writer is not None and self._trims:
            await self._write(_trim, self._take_trims(), self.retention)
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
        self.prepare_new(record)
        state = _dumps(record.state)
        record.base_version, record.base_bytes, record.delta_bytes = record.version, len(state), 0
        await self._write(_insert_session, record, state)
        self._remember(record.id, record.created, record.version, loads(state))  # a copy the caller cannot change

    @staticmethod
    def _record(row: tuple) -> SessionRecord:
        sid, created, updated, expires, version, calls, config, checklists, status, tags, base, size, deltas = row
        return SessionRecord(sid, loads(config), {}, version, calls, loads(checklists), created, updated, expires,
                             status, loads(tags), base, size, deltas)

    async def get(self, session_id: str) -> SessionRecord | None:
        for _ in range(READ_ATTEMPTS):
            rows = await self._read(f"SELECT {_RECORD_COLUMNS} FROM sessions WHERE id=? AND expires>=?",  # noqa: S608
                                    (session_id, time.time()))
            if not rows:
                return None
            record = self._record(rows[0])
            if await self._load_state(record):
                return record
        raise SessionBusy(f"the state of session {session_id} kept changing while it was read; retry")

    async def delete(self, session_id: str) -> bool:
        self._forget(session_id)
        return await self._write(_delete_session, session_id)

    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        keep = self.retention.history_limit
        if keep:
            rows = await self._read(
                "SELECT entry FROM steps WHERE session_id=? AND seq > (SELECT calls - ? FROM sessions WHERE id=?) "
                "ORDER BY id LIMIT ? OFFSET ?", (session_id, keep, session_id, limit, offset))
        else:
            rows = await self._read("SELECT entry FROM steps WHERE session_id=? AND seq IS NOT NULL ORDER BY id "
                                    "LIMIT ? OFFSET ?", (session_id, limit, offset))
        return [loads(r[0]) for r in rows]

    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        if self.retention.history_limit:
            limit = min(limit, self.retention.history_limit)
        rows = await self._read("SELECT entry FROM steps WHERE session_id=? AND seq IS NOT NULL ORDER BY id DESC "
                                "LIMIT ?", (session_id, limit))
        return [loads(r[0]) for r in reversed(rows)]

    async def _version_rows(self, session_id: str, version: int, after: int = -1) -> list[tuple[int, bool, Any]]:
        # newest first, back to `after` or the first checkpoint: the session's index has its steps in commit order,
        # and the rows walked are about the rows returned (for an old version, the newer ones too)
        rows: list[tuple[int, bool, Any]] = []
        cursor = self._conn().execute("SELECT version, checkpoint, body FROM steps WHERE session_id=? AND version <= ? "
                                      "ORDER BY id DESC", (session_id, version))
        try:
            for number, checkpoint, body in cursor:
                if number <= after:
                    break
                rows.append((number, bool(checkpoint), body))
                if checkpoint:
                    break
        finally:
            cursor.close()  # ends the statement's read of the WAL now, not when the cursor is collected
        return [(number, checkpoint, loads(body)) for number, checkpoint, body in reversed(rows)]

    async def count(self) -> int:
        rows = await self._read("SELECT COUNT(*) FROM sessions WHERE expires>=?", (time.time(),))
        return int(rows[0][0])

    async def list_sessions(self, query: SessionQuery) -> SessionPage:
        now = time.time()
        where: list[str] = ["s.expires >= ?"]
        params: list[Any] = [now]
        if query.tags:  # walk the first tag's index; the other tags are looked up per candidate
            source, order = "tags t JOIN sessions s ON s.id = t.session_id", ("t.created", "t.session_id")
            where.append("t.tag = ?")
            params.append(query.tags[0])
        else:
            source, order = "sessions s", ("s.created", "s.id")
        for tag in query.tags[1:]:
            where.append("EXISTS (SELECT 1 FROM tags u WHERE u.session_id = s.id AND u.tag = ?)")
            params.append(tag)
        if query.status is not None:
            where.append("s.status = ?")
            params.append(query.status)
        count_where, count_params = list(where), list(params)
        if query.cursor is not None:
            where.append(f"({order[0]}, {order[1]}) < (?, ?)")
            params.extend(query.cursor)
        rows = await self._read(
            f"SELECT {_SUMMARY_COLUMNS} FROM {source} WHERE {' AND '.join(where)} "  # noqa: S608 - fixed fragments
            f"ORDER BY {order[0]} DESC, {order[1]} DESC LIMIT ?", (*params, min(query.limit + 1, MAX_SCAN)))
        found = [SessionSummary(sid, created, updated, status, calls, version, loads(config), loads(tags))
                 for sid, created, updated, status, calls, version, config, tags in rows]
        page = page_of(found, query)
        if query.cursor is None:
            total = await self._read(f"SELECT COUNT(*) FROM {source} WHERE {' AND '.join(count_where)}",  # noqa: S608
                                     tuple(count_params))
            page.total = int(total[0][0])
        return page

    async def purge_expired(self) -> int:
        if self._trims:
            await self._write(_trim, self._take_trims(), self.retention)
        gone = await self._write(_purge, time.time())
        if gone:
            await self._write(_give_back, VACUUM_PAGES)
        return gone

    # -- the lease -------------------------------------------------------------------------
    def _lockf(self, mode: int, offset: int) -> None:
        """`fcntl.lockf` on byte `offset` of the lock file."""
        assert self._lock_fd is not None, "store not opened"
        fcntl.lockf(self._lock_fd, mode, 1, offset)

    def _lock(self, offset: int, mode: int) -> bool:
        try:
            self._lockf(mode | fcntl.LOCK_NB, offset)
        except OSError:
            return False
        return True

    async def _lease_try(self, session_id: str, owner: str) -> bool:
        slot = _slot(session_id)
        if slot not in self._held and self._lock(slot, fcntl.LOCK_EX):
            self._held[slot] = owner
            if slot in self._waiting:  # stop announcing that we wait
                self._waiting.discard(slot)
                self._lockf(fcntl.LOCK_UN, LOCK_SLOTS + slot)
            return True
        if slot not in self._waiting and self._lock(LOCK_SLOTS + slot, fcntl.LOCK_SH):
            self._waiting.add(slot)
        return False

    async def _lease_abandon(self, session_id: str) -> None:
        slot = _slot(session_id)
        if slot in self._waiting:
            self._waiting.discard(slot)
            self._lockf(fcntl.LOCK_UN, LOCK_SLOTS + slot)

    async def _lease_release(self, session_id: str, owner: str) -> bool:
        slot = _slot(session_id)
        if self._held.get(slot) != owner:
            return False
        del self._held[slot]
        self._lockf(fcntl.LOCK_UN, slot)
        gate = self._gates.get(session_id)
        return gate is not None and gate.users > 1 and self._others_wait(slot)  # only matters to local waiters

    def _others_wait(self, slot: int) -> bool:
        """Whether another process holds the 'waiting' byte of `slot` (a shared lock we cannot upgrade)."""
        if slot in self._held or slot in self._waiting:
            return False
        if self._lock(LOCK_SLOTS + slot, fcntl.LOCK_EX):
            self._lockf(fcntl.LOCK_UN, LOCK_SLOTS + slot)
            return False
        return True

    async def _commit(self, record: SessionRecord, commit: Commit, release: str | None) -> tuple[int, int, bool]:
        trims = self._take_trims() if self._trim_rows >= self._trim_group else []
        try:
            result = await self._write(_commit_rows, record, commit, self.retention, trims)
        finally:
            others = await self._lease_release(record.id, release) if release is not None else False
        if result == -2:
            raise SessionNotFound(record.id)
        if result == -1:
            raise VersionConflict(f"session {record.id} changed during the call (expected version {record.version})")
        version, calls = result
        self._count_trims(record.id, commit, version, calls)
        return version, calls, others

    def _count_trims(self, session_id: str, commit: Commit, version: int, calls: int) -> None:
        """Every TRIM_EVERY calls (versions) of a session with a window, TRIM_EVERY of its rows fall out of it."""
        if (commit.history is not None and self.retention.history_limit and calls % TRIM_EVERY == 0
                or commit.state is not None and self.retention.max_versions and version % TRIM_EVERY == 0):
            self._trims.add(session_id)
            self._trim_rows += TRIM_EVERY

    def _take_trims(self) -> list[str]:
        """The sessions whose old rows the next write deletes (sorted: their index entries are visited in order)."""
        ids, self._trims, self._trim_rows = sorted(self._trims), set(), 0
        return ids

    # -- workers ---------------------------------------------------------------------------
    async def heartbeat(self) -> None:
        await self._write(lambda conn, wid, now: conn.execute("INSERT OR REPLACE INTO workers VALUES (?,?)",
                                                               (wid, now)), self.worker_id, time.time())

    async def live_workers(self) -> int:
        rows = await self._read("SELECT COUNT(*) FROM workers WHERE seen>=?", (time.time() - WORKER_LIVE_SECONDS,))
        return int(rows[0][0])


# -- statements run on the writer thread (inside a transaction) ------------------------------
def _migrate(conn: sqlite3.Connection) -> None:
    """Create the tables; a file of an older layout loses its sessions (they are short-lived by design)."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current == SCHEMA_VERSION:
        return
    if current in (4, 5):  # 5 only dropped an index of 4 (`versions_checkpoints`)
        _migrate_to_steps(conn)
        return
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if tables & set(_TABLES):
        log.warning("session DB %s has an older layout (version %s): its sessions are dropped", conn, current)
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in _SCHEMA.split(";"):  # not executescript: it would commit the open transaction
        if statement.strip():
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _migrate_to_steps(conn: sqlite3.Connection) -> None:
    """Layout 4 or 5 to 6, sessions kept: `history` and `versions` become `steps`. A write of layout 5 added a row and
    an index entry to each (layout 4, one more to an index of the versions' checkpoint flag); a step is one of
    each. Dropping the two tables drops their indexes."""
    conn.execute("ALTER TABLE sessions ADD COLUMN trim_calls INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE sessions ADD COLUMN trim_versions INTEGER NOT NULL DEFAULT 0")
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO steps (session_id, version, checkpoint, body) "
                 "SELECT session_id, version, checkpoint, body FROM versions ORDER BY session_id, version")
    conn.execute("INSERT INTO steps (session_id, seq, entry) "
                 "SELECT session_id, seq, entry FROM history ORDER BY session_id, seq")
    conn.execute("DROP TABLE history")
    conn.execute("DROP TABLE versions")
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _give_back(conn: sqlite3.Connection, pages: int) -> int:
    """Return up to `pages` free pages to the file system; the number returned. One page per statement: Python's
    sqlite3 steps a statement without result columns once, so `PRAGMA incremental_vacuum(N)` frees a single page."""
    count = min(int(conn.execute("PRAGMA freelist_count").fetchone()[0]), pages)
    for _ in range(count):
        conn.execute("PRAGMA incremental_vacuum(1)")
    return count


def _auto_vacuum(conn: sqlite3.Connection, path: Path) -> None:
    """Turn on incremental auto_vacuum in a file made without it (before Gecko set it ahead of WAL, every file was
    made so: `auto_vacuum` 0, and swept sessions never gave their pages back). Needs one VACUUM, which rewrites the
    file; while another worker holds it, the next start does it."""
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 0:
        return
    try:
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("VACUUM")
        log.info("session DB %s: incremental auto_vacuum turned on (one VACUUM)", path)
    except sqlite3.OperationalError as exc:
        log.warning("session DB %s: auto_vacuum stays off until the next start (%s)", path, exc)


def _insert_session(conn: sqlite3.Connection, r: SessionRecord, state: str) -> None:
    conn.execute(f"INSERT INTO sessions ({_RECORD_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",  # noqa: S608
                 (r.id, r.created, r.updated, r.expires, r.version, r.calls, _dumps(r.config), _dumps(r.checklists),
                  r.status, _dumps(r.tags), r.base_version, r.base_bytes, r.delta_bytes))
    conn.execute("INSERT INTO steps (session_id, version, checkpoint, body) VALUES (?,?,1,?)", (r.id, r.version, state))
    _insert_tags(conn, r.id, r.created, r.tags)


def _insert_tags(conn: sqlite3.Connection, session_id: str, created: float, tags: list[str]) -> None:
    conn.executemany("INSERT OR IGNORE INTO tags VALUES (?,?,?)", [(tag, created, session_id) for tag in tags])


def _delete_rows(conn: sqlite3.Connection, session_id: str) -> None:
    conn.execute("DELETE FROM sessions WHERE id=?", (session_id,))
    conn.execute("DELETE FROM steps WHERE session_id=?", (session_id,))
    conn.execute("DELETE FROM tags WHERE session_id=?", (session_id,))


def _delete_session(conn: sqlite3.Connection, session_id: str) -> bool:
    existed = conn.execute("SELECT 1 FROM sessions WHERE id=? AND expires>=?", (session_id, time.time())).fetchone()
    _delete_rows(conn, session_id)
    return existed is not None


def _purge(conn: sqlite3.Connection, now: float) -> int:
    gone = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE expires<?", (now,)).fetchall()]
    for sid in gone:
        _delete_rows(conn, sid)
    conn.execute("DELETE FROM workers WHERE seen<?", (now - 10 * WORKER_LIVE_SECONDS,))  # workers long gone
    return len(gone)


def _trim(conn: sqlite3.Connection, session_ids: list[str], retention: Retention) -> None:
    """Delete the steps of `session_ids` that fell out of their windows, as their records stand now (a session deleted
    and made again under its id since keeps what its new window holds).

    A step holds a call's history entry, a state version, or both; it goes once what it holds is out of its window:
    an entry older than the last `history_limit` calls, a version older than the checkpoint the oldest kept version
    is rebuilt from. A step whose entry is out and whose version is not (or the reverse) stays whole: a window
    that keeps everything (0) keeps the other half of its steps too. No read shows what is out of its window.
    """
    for sid in session_ids:
        row = conn.execute("SELECT calls, version, trim_calls, trim_versions FROM sessions WHERE id=?", (sid,)).fetchone()
        if row is None:
            continue
        calls, version, calls_before, versions_before = row  # where the last trim left each window (step ids)
        calls_from = _NOTHING  # steps below this id hold no kept entry
        if retention.history_limit:  # from where the last trim found it: the steps walked are the ones out since
            kept = conn.execute("SELECT id FROM steps WHERE session_id=? AND id >= ? AND seq >= ? ORDER BY id LIMIT 1",
                                (sid, calls_before, retention.first_call(calls))).fetchone()
            calls_from = kept[0] if kept else _EVERYTHING
        versions_from = _NOTHING  # steps below this id hold no kept version
        if retention.max_versions:  # the checkpoint the oldest kept version is rebuilt from (a checkpoint's index)
            base = conn.execute("SELECT id FROM steps WHERE session_id=? AND checkpoint=1 AND version <= ? "
                                "ORDER BY version DESC LIMIT 1", (sid, retention.oldest_version(version))).fetchone()
            versions_from = base[0] if base else _NOTHING
        both = min(calls_from, versions_from)
        if both > _NOTHING:
            conn.execute("DELETE FROM steps WHERE session_id=? AND id < ?", (sid, both))
        if calls_from > both:  # entries out of the window above the versions kept: the steps that hold only those
            conn.execute("DELETE FROM steps WHERE session_id=? AND id >= ? AND id < ? AND version IS NULL",
                         (sid, max(both, calls_before), calls_from))
        elif versions_from > both:  # and the reverse
            conn.execute("DELETE FROM steps WHERE session_id=? AND id >= ? AND id < ? AND seq IS NULL",
                         (sid, max(both, versions_before), versions_from))
        conn.execute("UPDATE sessions SET trim_calls=?, trim_versions=? WHERE id=?",
                     (calls_from if calls_from < _EVERYTHING else calls_before, versions_from, sid))


def _commit_rows(conn: sqlite3.Connection, record: SessionRecord, commit: Commit, retention: Retention,
                 trims: list[str]) -> tuple[int, int] | int:
    """The out-of-window rows of `trims` (they go whether or not this commit lands), then the commit's rows."""
    if trims:
        _trim(conn, trims, retention)
    now = time.time()
    stored = commit.stored if commit.state is not None else None
    version = record.version + (stored is not None)
    sets = ["updated=?", "expires=?", "version=?", "calls=calls+?"]
    values: list[Any] = [now, now + retention.ttl, version, int(commit.history is not None)]
    if stored is not None and commit.checkpoint:
        sets += ["base_version=?", "base_bytes=?", "delta_bytes=0"]
        values += [version, len(stored)]
    elif stored is not None:
        sets.append("delta_bytes=delta_bytes+?")
        values.append(len(stored))
    if commit.checklists is not None:
        sets.append("checklists=?")
        values.append(_dumps(commit.checklists))
    if commit.config is not None:
        sets.append("config=?")
        values.append(_dumps(commit.config))
    if commit.status is not None:
        sets.append("status=?")
        values.append(commit.status)
    if commit.tags is not None:
        sets.append("tags=?")
        values.append(_dumps(commit.tags))
    row = conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id=? AND version=? AND expires>=? "  # noqa: S608
                       "RETURNING calls, created", (*values, record.id, record.version, now)).fetchone()
    if row is None:
        live = conn.execute("SELECT 1 FROM sessions WHERE id=? AND expires>=?", (record.id, now)).fetchone()
        return -1 if live else -2
    calls = int(row[0])
    if commit.tags is not None:
        _insert_tags(conn, record.id, row[1], commit.tags)
    if stored is not None:
        conn.execute("INSERT INTO steps (session_id, seq, version, checkpoint, entry, body) VALUES (?,?,?,?,?,?)",
                     (record.id, calls if commit.history is not None else None, version, int(commit.checkpoint),
                      _dumps(commit.history) if commit.history is not None else None, stored))
    elif commit.history is not None:
        conn.execute("INSERT INTO steps (session_id, seq, entry) VALUES (?,?,?)",
                     (record.id, calls, _dumps(commit.history)))
    return version, calls
