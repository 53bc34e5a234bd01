"""The SQLite writer's group commit: a batch is one transaction, and a write that raises fails alone."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from gecko.sessions.sqlite_writer import Writer, connect


def _table(path: Path) -> None:
    conn = connect(path)
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    conn.close()


def _rows(path: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT k, v FROM t ORDER BY k").fetchall()
    finally:
        conn.close()


class Calls:
    """Counts how often each write ran (on the writer thread)."""

    def __init__(self) -> None:
        self.runs: dict[int, int] = {}

    def insert(self, conn: sqlite3.Connection, key: int) -> int:
        self.runs[key] = self.runs.get(key, 0) + 1
        conn.execute("INSERT INTO t VALUES (?, ?)", (key, f"v{key}"))
        return key * 10


def _with_writer(path: Path, body: Callable[[Writer], Awaitable[Any]]) -> Any:
    """`body(writer)` on a writer of `path`, closed afterwards."""
    async def main() -> Any:
        writer = Writer(path)
        try:
            return await body(writer)
        finally:
            await asyncio.to_thread(writer.close)

    return asyncio.run(main())


async def _one_batch(writer: Writer, writes: list[tuple[Any, tuple]]) -> list[Any]:
    """Submit `writes` while the writer is held up by a first write, so they are drained as one batch."""
    gate, entered = threading.Event(), threading.Event()

    def hold(conn: sqlite3.Connection) -> None:
        entered.set()
        gate.wait(10)

    first = asyncio.ensure_future(writer.submit(hold))
    await asyncio.to_thread(entered.wait, 10)
    pending = [asyncio.ensure_future(writer.submit(func, *args)) for func, args in writes]
    await asyncio.sleep(0)  # every submit has put its write on the queue
    gate.set()
    await first
    return await asyncio.gather(*pending, return_exceptions=True)


def test_a_batch_without_errors_runs_each_write_once(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    _table(path)
    calls = Calls()

    results = _with_writer(path, lambda writer: _one_batch(writer, [(calls.insert, (k,)) for k in range(1, 6)]))
    assert results == [10, 20, 30, 40, 50]
    assert calls.runs == {k: 1 for k in range(1, 6)}
    assert _rows(path) == [(k, f"v{k}") for k in range(1, 6)]


def test_a_write_that_raises_fails_alone_and_the_others_of_its_batch_are_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    _table(path)
    calls = Calls()

    def clash(conn: sqlite3.Connection, key: int) -> None:
        conn.execute("INSERT INTO t VALUES (?, ?)", (key, "clash"))  # the key of a write before it: a constraint error

    writes = [(calls.insert, (1,)), (calls.insert, (2,)), (clash, (1,)), (calls.insert, (3,))]
    first, second, failed, third = _with_writer(path, lambda writer: _one_batch(writer, writes))
    assert (first, second, third) == (10, 20, 30)
    assert isinstance(failed, sqlite3.IntegrityError)
    assert _rows(path) == [(1, "v1"), (2, "v2"), (3, "v3")]  # nothing of the failed write, nothing twice
    assert calls.runs == {1: 2, 2: 2, 3: 1}  # the writes before the failure ran again after the rollback


def test_a_python_error_in_a_write_reaches_its_caller(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    _table(path)
    calls = Calls()

    def broken(conn: sqlite3.Connection) -> None:
        raise ValueError("broken write")

    failed, stored = _with_writer(path, lambda writer: _one_batch(writer, [(broken, ()), (calls.insert, (7,))]))
    assert isinstance(failed, ValueError) and stored == 70
    assert _rows(path) == [(7, "v7")]


def test_a_write_lock_held_elsewhere_fails_the_batch_once_it_gives_up(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import gecko.sessions.sqlite_writer as sqlite_writer

    monkeypatch.setattr(sqlite_writer, "BUSY_GIVE_UP_SECONDS", 0.3)
    path = tmp_path / "w.db"
    _table(path)
    calls = Calls()
    other = connect(path)

    async def while_locked(writer: Writer) -> Any:
        await writer.submit(lambda conn: None)  # the writer's connection is open
        other.execute("BEGIN IMMEDIATE")  # another process holds SQLite's write lock
        try:
            return await asyncio.gather(writer.submit(calls.insert, 1), return_exceptions=True)
        finally:
            other.execute("ROLLBACK")

    try:
        (result,) = _with_writer(path, while_locked)
    finally:
        other.close()
    assert isinstance(result, sqlite3.OperationalError) and "locked" in str(result)
    assert calls.runs == {}  # never run without the lock
