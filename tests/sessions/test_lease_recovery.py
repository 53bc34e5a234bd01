"""A holder killed with SIGKILL blocks its session for less than 5 s, on SQLite and on Redis."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from gecko.sessions import SessionRecord, open_store
from utils.paths import REPO_ROOT

HOLDER = textwrap.dedent("""
    import asyncio, sys
    from gecko.sessions import open_store

    async def main():
        store = open_store(sys.argv[1], sqlite_path=sys.argv[2], ttl=600)
        await store.open()
        await store.acquire(sys.argv[3])
        print("held", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
""")


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_session_is_usable_within_5s_of_its_holders_death(backend, tmp_path, request):
    spec = request.getfixturevalue("redis_url") if backend == "redis" else "sqlite"
    store = open_store(spec, sqlite_path=tmp_path / "s.db", ttl=600)
    await store.open()
    sid = f"k-{time.time_ns()}"
    await store.create(SessionRecord(id=sid))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, spec, str(tmp_path / "s.db"), sid], cwd=REPO_ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        waiter = asyncio.ensure_future(store.acquire(sid))
        done, _ = await asyncio.wait({waiter}, timeout=0.5)
        assert not done  # the holder is alive: we queue behind it
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        died = time.monotonic()
        hold = await asyncio.wait_for(waiter, 10)
        waited = time.monotonic() - died
        assert await store.read(hold) is not None
        await store.release(hold)
        assert waited < 5.0, f"the session stayed blocked {waited:.1f}s after its holder died"
    finally:
        if holder.poll() is None:
            holder.kill()
        await store.close()
