"""One writer thread per process with group commit for the SQLite store.

Every write of the process goes through one connection in one thread: pending writes are drained
into a single `BEGIN IMMEDIATE … COMMIT`. Fewer transactions means less contention for SQLite's single
write lock between workers. One failure does not undo the others: a batch runs as one plain transaction,
and when one of its writes raises, the batch is rolled back and run again with each write inside its own
savepoint. Writes fail rarely (a version conflict is a result, not an error), and the two statements of
a savepoint cost each write of a batch about 5 % of its process's CPU (b_valid_write in perf/rule_path.py).
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_BATCH = 256
BUSY_GIVE_UP_SECONDS = 30.0


def connect(path: Path, busy_timeout_ms: int = 0) -> sqlite3.Connection:
    """An autocommit connection in WAL mode; a new file gets incremental auto_vacuum (see `SqliteStore.open`).

    Switching to WAL needs a moment of exclusive access, which another worker starting at the same
    time may hold: that step waits up to `BUSY_GIVE_UP_SECONDS`. Afterwards the busy timeout is `busy_timeout_ms`
    (0 for the writer, which retries `BEGIN IMMEDIATE` itself).
    """
    conn = sqlite3.connect(path, timeout=BUSY_GIVE_UP_SECONDS, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_GIVE_UP_SECONDS * 1000)}")
    # before WAL: switching to WAL writes the file's first page, after which auto_vacuum needs a VACUUM to change
    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    return conn


def begin_immediate(conn: sqlite3.Connection) -> None:
    """`BEGIN IMMEDIATE`, retrying quickly while another process holds the write lock."""
    delay, deadline = 0.0002, time.monotonic() + BUSY_GIVE_UP_SECONDS
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 1.5, 0.004)


class Writer:
    """Serialises the process's writes onto one thread and commits them in batches."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="gecko-sqlite-writer", daemon=True)
        self._thread.start()

    async def submit(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run `func(conn, *args)` inside the next batch's transaction; return its result or raise its error.

        `func` may run twice, the first run rolled back (a write of its batch failed): it must change nothing but
        the database.
        """
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.put((func, args, future, loop))
        return await future

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        conn = connect(self._path)
        while True:
            item = self._queue.get()
            if item is None:
                break
            batch = [item]
            stop = False
            while len(batch) < MAX_BATCH:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            self._commit(conn, batch)
            if stop:
                break
        conn.close()

    def _commit(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        try:
            begin_immediate(conn)
            results = _run_plain(conn, batch)
            if results is None:  # a write raised and the batch was rolled back: again, one savepoint per write
                begin_immediate(conn)
                results = _run_in_savepoints(conn, batch)
        except Exception as exc:  # noqa: BLE001 - the whole batch failed; every caller learns why
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:  # no transaction open (the write lock stayed taken), or SQLite rolled back itself
                pass
            results = [(False, exc)] * len(batch)
        for (ok, value), (_, _, future, loop) in zip(results, batch):
            loop.call_soon_threadsafe(_settle, future, ok, value)


def _run_plain(conn: sqlite3.Connection, batch: list[Any]) -> list[tuple[bool, Any]] | None:
    """The batch in the open transaction, no savepoints, committed; None when a write raised (the transaction is
    then rolled back: nothing of the batch is stored)."""
    try:
        results = [(True, func(conn, *args)) for func, args, _, _ in batch]
        conn.execute("COMMIT")
    except Exception:  # noqa: BLE001 - the caller runs the batch again, one savepoint per write
        if conn.in_transaction:  # else SQLite rolled it back itself (a full disk)
            conn.execute("ROLLBACK")
        return None
    return results


def _run_in_savepoints(conn: sqlite3.Connection, batch: list[Any]) -> list[tuple[bool, Any]]:
    """The batch in the open transaction, each write in its own savepoint (a write that raises fails alone),
    committed. Raises when the whole batch failed."""
    results: list[tuple[bool, Any]] = []
    for func, args, _, _ in batch:
        conn.execute("SAVEPOINT item")
        try:
            results.append((True, func(conn, *args)))
            conn.execute("RELEASE item")
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting caller
            if not conn.in_transaction:  # SQLite rolled the whole batch back itself (a full disk): all fail
                raise
            conn.execute("ROLLBACK TO item")
            conn.execute("RELEASE item")
            results.append((False, exc))
    conn.execute("COMMIT")
    return results


def _settle(future: asyncio.Future, ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
