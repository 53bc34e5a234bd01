"""The session store interface. Backends: memory, SQLite (default), Redis.

A call works on a session between `begin` (read it, optionally taking its cross-process lease) and
`finish` (compare-and-set the state on the version read, append history, release the lease) or
`abort`. Within a process, `local_lock` queues the calls of one session. Across processes either the
lease serialises them (`exclusive`) or the version check does (optimistic: a stale call is re-run).
Either way a lost update is impossible.
"""

from __future__ import annotations

import abc
import asyncio
import itertools
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from gecko.sessions.model import Commit, SessionBusy, SessionRecord

LEASE_SECONDS = 120.0
WAIT_SECONDS = 60.0
WORKER_LIVE_SECONDS = 15.0


class SessionStore(abc.ABC):
    """Abstract store; one instance per worker process."""

    backend: str = "abstract"

    def __init__(self, ttl: float, history_limit: int = 1000) -> None:
        self.ttl = ttl
        self.history_limit = history_limit
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._local_locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self._owners = itertools.count()

    # -- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:  # noqa: B027 - optional hook
        """Prepare connections/tables. Default: nothing."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources. Default: nothing."""

    # -- records ---------------------------------------------------------------------------
    @abc.abstractmethod
    async def create(self, record: SessionRecord) -> None: ...

    @abc.abstractmethod
    async def get(self, session_id: str) -> SessionRecord | None: ...

    @abc.abstractmethod
    async def delete(self, session_id: str) -> bool: ...

    @abc.abstractmethod
    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]: ...

    @abc.abstractmethod
    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        """The last `limit` history entries, oldest first."""

    @abc.abstractmethod
    async def snapshot(self, session_id: str, version: int) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    async def count(self) -> int: ...

    @abc.abstractmethod
    async def purge_expired(self) -> int: ...

    # -- the lease -------------------------------------------------------------------------
    @abc.abstractmethod
    async def _try_begin(self, session_id: str, owner: str, exclusive: bool) -> SessionRecord | None | bool:
        """Read the session (taking its cross-process lease when `exclusive`).

        Returns the record, False if the lease is busy, None if the session does not exist.
        """

    @abc.abstractmethod
    async def finish(self, session_id: str, owner: str, expected_version: int, commit: Commit) -> int:
        """Apply `commit` if the version still matches, release the lease; return the new version.

        Raises VersionConflict when the version moved (the lease was lost).
        """

    @abc.abstractmethod
    async def abort(self, session_id: str, owner: str) -> None: ...

    # -- workers ---------------------------------------------------------------------------
    @abc.abstractmethod
    async def heartbeat(self) -> None: ...

    @abc.abstractmethod
    async def live_workers(self) -> int: ...

    # -- shared logic ----------------------------------------------------------------------
    async def begin(self, session_id: str, exclusive: bool = True) -> tuple[SessionRecord | None, str]:
        """Start a call on a session; return (record or None if missing, owner token).

        `exclusive=True` waits for the session's cross-process lease, so no other worker runs a call on it
        until `finish`/`abort` (use it when a call is expensive to redo, e.g. LLM stages).
        `exclusive=False` is optimistic: `finish` still refuses a stale version (VersionConflict) and
        the caller re-runs the call on the fresh state. Callers hold `local_lock` either way.
        """
        owner = f"{self.worker_id}#{next(self._owners)}"  # unique per call; no syscall (urandom is slow on VMs)
        deadline = time.monotonic() + WAIT_SECONDS
        delay = 0.001
        while True:
            got = await self._try_begin(session_id, owner, exclusive)
            if got is not False:
                return got, owner  # type: ignore[return-value]
            if time.monotonic() > deadline:
                raise SessionBusy(f"session {session_id} stayed busy for {WAIT_SECONDS:.0f}s")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.025)

    async def acquire_local(self, session_id: str) -> Callable[[], None]:
        """Take the in-process lock of a session; return the function that releases it (call it once).

        It queues same-process callers instead of polling the store, and lets a call hand its lock to a
        background task (the deferred state update) so the session's next call waits for that update.
        """
        lock, users = self._local_locks.get(session_id, (asyncio.Lock(), 0))
        self._local_locks[session_id] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._forget_local(session_id)
            raise
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                lock.release()
                self._forget_local(session_id)

        return release

    def _forget_local(self, session_id: str) -> None:
        lock, users = self._local_locks[session_id]
        if users <= 1:
            del self._local_locks[session_id]
        else:
            self._local_locks[session_id] = (lock, users - 1)

    @asynccontextmanager
    async def local_lock(self, session_id: str) -> AsyncIterator[None]:
        """`acquire_local` as a context manager."""
        release = await self.acquire_local(session_id)
        try:
            yield
        finally:
            release()

    def expiry(self) -> float:
        return time.time() + self.ttl


def open_store(spec: str, *, sqlite_path: Any, ttl: float, history_limit: int) -> SessionStore:
    """Build a store from `--store`: `memory`, `sqlite[:PATH]`, `redis://…`."""
    if spec == "memory":
        from gecko.sessions.memory import MemoryStore

        return MemoryStore(ttl, history_limit)
    if spec == "sqlite" or spec.startswith("sqlite:"):
        from gecko.sessions.sqlite import SqliteStore

        return SqliteStore(sqlite_path, ttl, history_limit)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        from gecko.sessions.redis import RedisStore

        return RedisStore(spec, ttl, history_limit)
    raise ValueError(f"unknown store {spec!r}; use memory, sqlite, sqlite:PATH or redis://host:port/db")
