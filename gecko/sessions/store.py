"""The session store interface. Backends: memory, SQLite (default), Redis.

Every call that changes a session (tool calls, state endpoints, checklists) runs between `acquire`
and `release` and writes with `commit`. `acquire` is a queue, never a retry loop:

1. the callers of one process line up on the session's FIFO lock (`_Gate`);
2. the first in line takes the session's cross-process lease (an fcntl lock for SQLite, a key with
   a short expiry, renewed while held, for Redis), polling it while another process holds it and
   announcing that it waits.

A process keeps the lease while its own callers queue, up to `TURN_CALLS` calls in a row: handing
the session to the next local caller costs nothing and it reuses the record the last commit left,
so a hot session pays one store read per turn, not per call. At the end of a turn, if another
process announced that it waits, the next local caller waits `YIELD_SECONDS` before asking again,
so the processes take turns and nobody starves. No call is ever re-run: the version check in
`commit` (compare-and-set) is a safety net that only fires if a lease expired under a stalled holder.

Retention (`versions.Retention`) is one behaviour on every store: the last `history_limit` calls
and `max_versions` state versions are kept, expired sessions are purged by the sweep
(`purge_expired`) with their history and versions, and `delete` frees them at once.

A store keeps no copy of the current state beside its versions: a commit writes the patch (or, now
and then, a checkpoint), never the whole state. Each process keeps the decoded states it last saw
(`STATE_CACHE_SESSIONS` sessions, keyed by session, creation time and version); reading a session
brings its cached state up to date with the deltas stored since, so neither a read nor a write
costs the size of the state, and a session's calls cost the same at its 10th call and its 5,000th.
Within a turn, a call may change in place the collections the turn's earlier calls created instead of
copying them (`_Gate.owned`, `gecko.sessions.owned`); those states are never cached until the turn ends.
"""

from __future__ import annotations

import abc
import asyncio
import copy
import itertools
import os
import socket
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from gecko.sessions.listing import SessionPage, SessionQuery, added_tags, initial_tags, next_status
from gecko.sessions.model import Commit, SessionBusy, SessionRecord, VersionGone
from gecko.sessions.owned import Owned
from gecko.sessions.versions import Retention, account_version, rebuild
from utils.jsonutil import dumps_compact

WAIT_SECONDS = 60.0
"""Longest wait for a session before the caller gets SessionBusy (503)."""
WORKER_LIVE_SECONDS = 15.0
TURN_CALLS = 64
"""Calls a process runs on a session in a row while its own callers queue, before it lets the lease go. Each turn
costs a hand-over (the other process polls for the lease, then reads the deltas it missed): with 16, a hot session
on 2 workers answered about 10 % fewer calls per second; a turn of 64 calls lasts about 50 ms."""
YIELD_SECONDS = 0.004
"""Pause before re-taking a lease another process waits for (longer than POLL_MAX_SECONDS)."""
POLL_MAX_SECONDS = 0.002
"""Longest pause between two attempts to take a lease held by another process."""
STATE_CACHE_SESSIONS = 256
"""Sessions whose decoded state a process keeps (the most recently used)."""
READ_ATTEMPTS = 3
"""Reads of a session whose versions were trimmed between reading its record and its rows, before giving up."""


@dataclass
class _Gate:
    """This process's view of one session: its FIFO of callers, and the lease while held."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0
    """Callers holding or waiting for `lock`."""
    owner: str | None = None
    """Token of the cross-process lease while this process holds it."""
    turn: int = 0
    """Calls run in the current turn."""
    record: SessionRecord | None = None
    """The session as this process last committed it (valid while the lease is held)."""
    yield_first: bool = False
    """Another process waited when the lease was given up: let it go first."""
    pending: asyncio.Future | None = None
    """The last write of this turn still in flight (the next one is chained behind it)."""
    owned: Owned = field(default_factory=Owned)
    """Containers the turn's calls created in their states, which the next call of the turn may change in place
    (`gecko.sessions.owned`). The states of a turn are read only by its next call: none is cached until the turn
    ends, when the last one becomes an immutable value again."""

    def end_chain(self) -> None:
        """The turn's chain of states ends, and its last state is dropped with it (the next caller reads the store)."""
        self.owned.clear()
        self.record = None


@dataclass
class Hold:
    """A caller's right to change one session, from `acquire` to `release` (or a commit that hands it on)."""

    session_id: str
    gate: _Gate
    handed: bool = False
    """The session went to the next caller already (at `commit` during a turn, or at `release`)."""
    committed: bool = False
    """A commit of this caller was stored, or is on its way (chained behind the turn's earlier writes)."""

    @property
    def owned(self) -> Owned:
        """Containers of the held state that this caller's change may change in place (see `_Gate.owned`)."""
        return self.gate.owned


async def _settled(future: asyncio.Future | None) -> None:
    """Wait for `future` to finish, whatever its outcome (its own caller handles its error)."""
    if future is not None and not future.done():
        await asyncio.wait([future])


class SessionStore(abc.ABC):
    """Abstract store; one instance per worker process."""

    backend: str = "abstract"
    unavailable_errors: tuple[type[Exception], ...] = ()
    """Exceptions meaning the store cannot be reached right now (the API answers 503 with Retry-After)."""
    writes_in_order: bool = False
    """Commits started one after another are stored in that order (one FIFO writer per process), so a turn's next
    write is handed to the store at once instead of after the previous one is stored: the writer can put them in
    one transaction. A write that fails makes the ones started after it fail too (their version check)."""

    def __init__(self, retention: Retention) -> None:
        self.retention = retention
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._gates: dict[str, _Gate] = {}
        self._owners = itertools.count()
        self._releasing: set[asyncio.Task[None]] = set()
        self._states: OrderedDict[str, tuple[float, int, dict[str, Any]]] = OrderedDict()
        """Session id → (created, version, state): the decoded states this process saw last."""

    @property
    def ttl(self) -> float:
        return self.retention.ttl

    # -- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:  # noqa: B027 - optional hook
        """Prepare connections/tables. Default: nothing."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources. Default: nothing."""

    # -- records ---------------------------------------------------------------------------
    @abc.abstractmethod
    async def create(self, record: SessionRecord) -> None:
        """Store a new session; its state is version `record.version`, stored whole."""

    @abc.abstractmethod
    async def get(self, session_id: str) -> SessionRecord | None:
        """The live session, or None (never created, deleted or expired)."""

    @abc.abstractmethod
    async def delete(self, session_id: str) -> bool:
        """Delete the session with its history and versions; False if there was no live session."""

    @abc.abstractmethod
    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        """History entries kept (the last `history_limit`), oldest first, from `offset`."""

    @abc.abstractmethod
    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        """The last `limit` history entries, oldest first."""

    @abc.abstractmethod
    async def _version_rows(self, session_id: str, version: int, after: int = -1) -> list[tuple[int, bool, Any]]:
        """Rows `(version, is_checkpoint, state or patch)` from the last checkpoint ≤ `version` up to it, only
        those after `after`."""

    @abc.abstractmethod
    async def count(self) -> int:
        """Live sessions."""

    @abc.abstractmethod
    async def list_sessions(self, query: SessionQuery) -> SessionPage:
        """Live sessions matching `query`, newest first, one page (see `gecko.sessions.listing`)."""

    @staticmethod
    def prepare_new(record: SessionRecord) -> None:
        """Give a record about to be created its tags (from its config) unless it has some."""
        if not record.tags:
            record.tags = initial_tags(record.config)

    @abc.abstractmethod
    async def purge_expired(self) -> int:
        """Delete expired sessions with their history and versions; return how many."""

    # -- the lease (backends) --------------------------------------------------------------
    @abc.abstractmethod
    async def _lease_try(self, session_id: str, owner: str) -> bool:
        """Take the cross-process lease if free; otherwise announce that this process waits for it."""

    @abc.abstractmethod
    async def _lease_release(self, session_id: str, owner: str) -> bool:
        """Give the lease up; return whether another process announced that it waits."""

    @abc.abstractmethod
    async def _commit(self, record: SessionRecord, commit: Commit, release: str | None) -> tuple[int, int, bool]:
        """Apply `commit` if the session is still at `record.version` (and live).

        Releases the lease held by `release` in the same step when given. Returns (new version,
        sequence number of the history entry or `record.calls`, whether another process waits).

        Raises:
            VersionConflict: the version moved (a lease expired under this caller).
            SessionNotFound: the session was deleted or expired meanwhile.
        """

    async def _lease_abandon(self, session_id: str) -> None:  # noqa: B027 - optional hook
        """Stop announcing that this process waits (it gave up). Default: nothing."""

    # -- workers ---------------------------------------------------------------------------
    @abc.abstractmethod
    async def heartbeat(self) -> None: ...

    @abc.abstractmethod
    async def live_workers(self) -> int: ...

    # -- serialisation of one session's changes --------------------------------------------
    async def acquire(self, session_id: str) -> Hold:
        """Queue for the session (in-process FIFO, then the cross-process lease) and return the hold.

        Raises:
            SessionBusy: the session stayed busy for WAIT_SECONDS.
        """
        gate = self._gates.get(session_id)
        if gate is None:
            gate = self._gates[session_id] = _Gate()
        gate.users += 1
        try:
            await gate.lock.acquire()
        except BaseException:
            self._leave(session_id, gate)
            raise
        try:
            if gate.owner is None:
                gate.owner = await self._wait_for_lease(session_id, gate.yield_first)
                gate.turn = 0
                gate.end_chain()
            gate.yield_first = False
            gate.turn += 1
        except BaseException:
            gate.lock.release()
            self._leave(session_id, gate)
            raise
        return Hold(session_id, gate)

    async def held_history_tail(self, hold: Hold, limit: int) -> list[dict[str, Any]]:
        """The last `limit` history entries of the held session, this turn's writes still in flight included.

        A commit hands the session to the next caller before its write is stored (see `commit`), so a
        plain `history_tail` could miss the previous call; this waits for that write first.
        """
        await _settled(hold.gate.pending)
        return await self.history_tail(hold.session_id, limit)

    async def read(self, hold: Hold) -> SessionRecord | None:
        """The held session: the record of the last commit in this turn, or a fresh read."""
        gate = hold.gate
        cached = gate.record
        if cached is not None and cached.expires >= time.time():
            return copy.copy(cached)
        await _settled(gate.pending)
        return await self.get(hold.session_id)

    async def commit(self, hold: Hold, record: SessionRecord, commit: Commit) -> int:
        """Write `commit` on top of `record` (as read under `hold`); return the new state version.

        While this process's turn goes on, the session is handed to the next local caller as soon as
        the new record is known, and the write completes behind it (writes of one session are
        chained, so they land in order); this call still returns only once its write is stored.
        """
        gate = hold.gate
        assert gate.owner is not None and not hold.handed, "commit without holding the session"
        _summarise(record, commit)
        self._prepare_version(record, commit)
        owner, previous = gate.owner, gate.pending
        hold.committed = True
        if gate.users <= 1 or gate.turn >= TURN_CALLS:
            try:
                await _settled(previous)
                version, _, others = await self._commit(record, commit, owner)
            except BaseException:
                gate.end_chain()
                gate.turn = TURN_CALLS  # a failed commit (e.g. a lost lease) ends the turn
                raise
            gate.owner, gate.pending = None, None
            gate.end_chain()  # the next turn reads the store (or the cache filled just below)
            gate.yield_first = others and gate.users > 1
            self._committed(record, commit, version)
            return version
        now = time.time()
        new = copy.copy(record)
        new.version += commit.state is not None
        if commit.stored is not None:
            account_version(new, new.version, len(commit.stored), commit.checkpoint)
        new.calls += commit.history is not None
        new.updated, new.expires = now, now + self.ttl
        if commit.state is not None:
            new.state = commit.state
        if commit.checklists is not None:
            new.checklists = commit.checklists
        if commit.config is not None:
            new.config = commit.config
        if commit.status is not None:
            new.status = commit.status
        if commit.tags is not None:
            new.tags = commit.tags
        write = asyncio.ensure_future(self._commit_after(previous, record, commit))
        gate.record, gate.pending = new, write
        self._hand_over(hold)
        try:
            version, _, _ = await asyncio.shield(write)
        except BaseException:
            if gate.pending is write:
                gate.end_chain()
                gate.turn = TURN_CALLS
            raise
        # Not cached: the next call of the turn may change this state's containers in place (`_Gate.owned`). The
        # turn's last state is cached when the turn ends (the other branch above).
        return version

    def _prepare_version(self, record: SessionRecord, commit: Commit) -> None:
        """Decide how the commit's new version is stored (`commit.stored`, `commit.checkpoint`): its patch, or the
        whole state when `Retention.is_checkpoint` says so."""
        if commit.state is None:
            return
        patch = dumps_compact(commit.patch) if commit.patch is not None else None
        commit.checkpoint = self.retention.is_checkpoint(record.version + 1, None if patch is None else len(patch),
                                                         record)
        commit.stored = dumps_compact(commit.state) if commit.checkpoint or patch is None else patch

    def _committed(self, record: SessionRecord, commit: Commit, version: int) -> None:
        """After a commit is stored: this process knows the new state."""
        if commit.state is not None:
            self._remember(record.id, record.created, version, commit.state)

    # -- the decoded-state cache -----------------------------------------------------------
    def _remember(self, session_id: str, created: float, version: int, state: dict[str, Any]) -> None:
        """Keep `state` as the session's decoded state at `version` (states are immutable values)."""
        cached = self._states.get(session_id)
        if cached is not None and cached[0] == created and cached[1] > version:
            return  # a newer one is known already
        self._states[session_id] = (created, version, state)
        self._states.move_to_end(session_id)
        while len(self._states) > STATE_CACHE_SESSIONS:
            self._states.popitem(last=False)

    def _forget(self, session_id: str) -> None:
        self._states.pop(session_id, None)

    async def _load_state(self, record: SessionRecord) -> bool:
        """Fill in the state of a record read without it: the cached state brought up to date with the deltas
        stored since, or the last checkpoint and its deltas. False when the rows were trimmed meanwhile (read the
        record again)."""
        cached = self._states.get(record.id)
        base = None
        if cached is not None and cached[0] == record.created and cached[1] <= record.version:
            base = (cached[1], cached[2])
            self._states.move_to_end(record.id)
            if base[0] == record.version:  # this process made or saw the current version: nothing to read
                record.state = base[1]
                return True
        rows = await self._version_rows(record.id, record.version, base[0] if base is not None else -1)
        state = rebuild(rows, record.version, base)
        if state is None and base is not None:  # the cached version is too old: from the checkpoint
            state = rebuild(await self._version_rows(record.id, record.version), record.version)
        if state is None:
            return False
        record.state = state
        self._remember(record.id, record.created, record.version, state)
        return True

    async def _commit_after(self, previous: asyncio.Future | None, record: SessionRecord,
                            commit: Commit) -> tuple[int, int, bool]:
        if not self.writes_in_order:
            await _settled(previous)
        return await self._commit(record, commit, None)

    async def release(self, hold: Hold) -> None:
        """End the hold: hand the session to the next local caller, or give the lease up."""
        if hold.handed:
            return
        gate = hold.gate
        if not hold.committed:  # a call that ended without a commit may have changed the turn's last state in place
            gate.end_chain()
        try:
            if gate.owner is not None and (gate.users <= 1 or gate.turn >= TURN_CALLS):
                owner, gate.owner, gate.record = gate.owner, None, None
                await _settled(gate.pending)
                gate.pending = None
                others = await self._lease_release(hold.session_id, owner)
                gate.yield_first = others and gate.users > 1
        finally:
            self._hand_over(hold)

    def _hand_over(self, hold: Hold) -> None:
        hold.handed = True
        hold.gate.lock.release()
        self._leave(hold.session_id, hold.gate)

    @asynccontextmanager
    async def holding(self, session_id: str) -> AsyncIterator[Hold]:
        """`acquire` … `release` as a context manager."""
        hold = await self.acquire(session_id)
        try:
            yield hold
        finally:
            await self.release(hold)

    def _leave(self, session_id: str, gate: _Gate) -> None:
        gate.users -= 1
        if gate.users <= 0 and self._gates.get(session_id) is gate:
            if gate.owner is not None:  # the next caller of a turn went away: never strand the lease
                task = asyncio.get_running_loop().create_task(self._release_after(gate.pending, session_id, gate.owner))
                self._releasing.add(task)
                task.add_done_callback(self._releasing.discard)
            del self._gates[session_id]

    async def _release_after(self, pending: asyncio.Future | None, session_id: str, owner: str) -> None:
        await _settled(pending)
        await self._lease_release(session_id, owner)

    def _held_leases(self) -> list[tuple[str, str]]:
        """(session id, owner) of every lease this process holds (Redis renews them)."""
        return [(sid, g.owner) for sid, g in self._gates.items() if g.owner is not None]

    async def _wait_for_lease(self, session_id: str, yield_first: bool) -> str:
        owner = f"{self.worker_id}#{next(self._owners)}"  # unique per turn; no syscall (urandom is slow on VMs)
        if yield_first:
            await asyncio.sleep(YIELD_SECONDS)
        deadline = time.monotonic() + WAIT_SECONDS
        delay = 0.0002
        try:
            while not await self._lease_try(session_id, owner):
                if time.monotonic() > deadline:
                    raise SessionBusy(f"session {session_id} stayed busy for {WAIT_SECONDS:.0f}s")
                await asyncio.sleep(delay)
                delay = min(delay * 2, POLL_MAX_SECONDS)
        except BaseException:
            await self._lease_abandon(session_id)
            raise
        return owner

    # -- versions --------------------------------------------------------------------------
    async def state_at(self, session_id: str, version: int, current: int) -> dict[str, Any]:
        """The state at `version` of a session now at `current`.

        Raises:
            VersionGone: `version` is newer than `current` or outside the retention window.
        """
        oldest = self.retention.oldest_version(current)
        if version > current or version < oldest:
            raise VersionGone(f"version {version} is not kept: this session keeps versions {oldest}..{current}"
                              + (f" (the last {self.retention.max_versions})" if self.retention.max_versions else ""))
        cached = self._states.get(session_id)
        if cached is not None and cached[1] == version:
            return cached[2]
        state = rebuild(await self._version_rows(session_id, version), version)
        if state is None:
            raise VersionGone(f"version {version} of session {session_id} is no longer stored")
        return state

    def expiry(self) -> float:
        return time.time() + self.ttl


def _summarise(record: SessionRecord, commit: Commit) -> None:
    """Set the commit's new status and tags (what listings filter on) from the history entry it writes."""
    status = next_status(record.status, commit.history)
    if status != record.status:
        commit.status = status
    added = added_tags(commit.config if commit.config is not None else record.config, record.tags, commit.history)
    if added:
        commit.tags = [*record.tags, *added]


def open_store(spec: str, *, sqlite_path: Any, ttl: float, history_limit: int = 1000, max_versions: int = 1000,
               checkpoint_every: int = 32, pool_size: int = 64) -> SessionStore:
    """Build a store from `--store`: `memory`, `sqlite[:PATH]`, `redis://…` (Redis pool of `pool_size`)."""
    retention = Retention(ttl, history_limit, max_versions, checkpoint_every)
    if spec == "memory":
        from gecko.sessions.memory import MemoryStore

        return MemoryStore(retention)
    if spec == "sqlite" or spec.startswith("sqlite:"):
        from gecko.sessions.sqlite import SqliteStore

        return SqliteStore(sqlite_path, retention)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        from gecko.sessions.redis import RedisStore

        return RedisStore(spec, retention, pool_size=pool_size)
    raise ValueError(f"unknown store {spec!r}; use memory, sqlite, sqlite:PATH or redis://host:port/db")
