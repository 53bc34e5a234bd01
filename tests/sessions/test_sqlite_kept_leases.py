"""SQLite keeps a lease it gives up while no other store asks for it: the session's next call takes it back with the
record its last commit left (no store read); another store, in another process or of the same file in this one,
gets it within milliseconds of asking; and no kept record outlives a change made elsewhere."""

from __future__ import annotations

import asyncio
import fcntl
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gecko.sessions import sqlite as sqlite_store
from gecko.sessions.model import Commit, SessionRecord
from gecko.sessions.sqlite import SqliteStore, _slot
from gecko.sessions.store import open_store
from utils.paths import REPO_ROOT


async def _open(path: Path) -> SqliteStore:
    store = open_store("sqlite", sqlite_path=path, ttl=60)
    assert isinstance(store, SqliteStore)
    await store.open()
    return store


async def _write(store: SqliteStore, session_id: str, n: int) -> int:
    async with store.holding(session_id) as hold:
        record = await store.read(hold)
        assert record is not None
        return await store.commit(hold, record, Commit(history={"n": n}, state={"n": n},
                                                       patch=[{"op": "replace", "path": "/n", "value": n}]))


def _count_reads(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    get = store.get

    async def counted(session_id: str) -> SessionRecord | None:
        reads.append(session_id)
        return await get(session_id)

    monkeypatch.setattr(store, "get", counted)
    return reads


async def test_the_next_call_takes_the_lease_back_with_its_record(tmp_path: Path, monkeypatch) -> None:
    store = await _open(tmp_path / "s.db")
    try:
        await store.create(SessionRecord(id="s", state={"n": 0}))
        assert await _write(store, "s", 1) == 1
        kept = store._kept[_slot("s")]
        assert kept.session_id == "s" and kept.record is not None and kept.record.version == 1
        reads = _count_reads(store, monkeypatch)
        for n in range(2, 6):
            assert await _write(store, "s", n) == n
        assert reads == []  # every call took the record back with the lease
        stored = await store.get("s")
        assert stored is not None and (stored.version, stored.calls, stored.state) == (5, 5, {"n": 5})
    finally:
        await store.close()


async def test_two_stores_of_one_file_take_turns_without_conflicts(tmp_path: Path, monkeypatch) -> None:
    first, second = await _open(tmp_path / "s.db"), await _open(tmp_path / "s.db")
    try:
        await first.create(SessionRecord(id="s", state={"n": 0}))
        reads = _count_reads(first, monkeypatch)
        n = 0
        for _ in range(10):
            for store in (first, second):  # each asks for the lease the other keeps
                n += 1
                started = time.monotonic()
                assert await _write(store, "s", n) == n
                assert time.monotonic() - started < 1.0
        assert len(reads) == 10  # the first store read the session again each time it came back
        assert [h["n"] for h in await first.history("s", 100, 0)] == list(range(1, 21))
        assert await second.state_at("s", 20, 20) == {"n": 20}
    finally:
        await first.close()
        await second.close()


async def test_a_session_deleted_elsewhere_is_not_brought_back_by_a_kept_record(tmp_path: Path) -> None:
    first, second = await _open(tmp_path / "s.db"), await _open(tmp_path / "s.db")
    try:
        await first.create(SessionRecord(id="s", state={"n": 0}))
        await _write(first, "s", 1)
        assert first._kept
        assert await second.delete("s")  # takes the lease: the first store gives it up, with its record
        async with first.holding("s") as hold:
            assert await first.read(hold) is None
    finally:
        await first.close()
        await second.close()


async def test_an_unused_kept_lease_is_given_up(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sqlite_store, "KEEP_IDLE_SECONDS", 0.05)
    first, second = await _open(tmp_path / "s.db"), await _open(tmp_path / "s.db")
    try:
        await first.create(SessionRecord(id="s", state={"n": 0}))
        await _write(first, "s", 1)
        slot = _slot("s")
        assert slot in first._kept and not second._lock(slot, fcntl.LOCK_EX)
        for _ in range(100):
            if not first._kept:
                break
            await asyncio.sleep(0.01)
        assert not first._kept and first._keeper is not None and first._keeper.done()
        assert second._lock(slot, fcntl.LOCK_EX)  # nobody holds it any more
        second._lockf(fcntl.LOCK_UN, slot)
    finally:
        await first.close()
        await second.close()


KEEPER = textwrap.dedent("""
    import asyncio, sys
    from gecko.sessions import open_store
    from gecko.sessions.model import Commit

    async def main():
        store = open_store("sqlite", sqlite_path=sys.argv[1], ttl=600)
        await store.open()
        async with store.holding(sys.argv[2]) as hold:
            record = await store.read(hold)
            await store.commit(hold, record, Commit(history={"n": 1}, state={"n": 1},
                                                    patch=[{"op": "replace", "path": "/n", "value": 1}]))
        print("kept" if store._kept else "given up", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
""")


async def test_another_process_gets_a_kept_lease_at_once(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await _open(path)
    keeper = None
    try:
        await store.create(SessionRecord(id="s", state={"n": 0}))
        keeper = subprocess.Popen([sys.executable, "-c", KEEPER, str(path), "s"], cwd=REPO_ROOT,
                                  stdout=subprocess.PIPE, text=True)
        assert keeper.stdout is not None and keeper.stdout.readline().strip() == "kept"
        started = time.monotonic()
        assert await asyncio.wait_for(_write(store, "s", 2), 10) == 2  # read after the other process's write
        assert time.monotonic() - started < 1.0
        assert [h["n"] for h in await store.history("s", 10, 0)] == [1, 2]
    finally:
        if keeper is not None:
            keeper.kill()
            keeper.wait(timeout=10)
        await store.close()
