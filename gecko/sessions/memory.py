"""In-process session store: for tests and single-worker runs.

States and history entries are treated as immutable values once stored (the pipeline builds new
states instead of mutating), so records are copied shallowly; only caller-supplied input is deep-copied.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from typing import Any

from gecko.sessions.model import Commit, SessionRecord, VersionConflict
from gecko.sessions.store import SessionStore


class MemoryStore(SessionStore):
    """Dicts in one process. `--workers 1` only (settings refuse it with several workers)."""

    backend = "memory"

    def __init__(self, ttl: float, history_limit: int = 1000) -> None:
        super().__init__(ttl, history_limit)
        self._records: dict[str, SessionRecord] = {}
        self._history: dict[str, deque[dict[str, Any]]] = {}
        self._snapshots: dict[str, dict[int, dict[str, Any]]] = {}
        self._leases: dict[str, tuple[str, float]] = {}

    def _live(self, session_id: str) -> SessionRecord | None:
        record = self._records.get(session_id)
        if record is not None and record.expires < time.time():
            self._drop(session_id)
            return None
        return record

    def _drop(self, session_id: str) -> None:
        self._records.pop(session_id, None)
        self._history.pop(session_id, None)
        self._snapshots.pop(session_id, None)
        self._leases.pop(session_id, None)

    async def create(self, record: SessionRecord) -> None:
        record.expires = self.expiry()
        self._records[record.id] = copy.deepcopy(record)
        self._history[record.id] = deque(maxlen=self.history_limit or None)
        self._snapshots[record.id] = {record.version: copy.deepcopy(record.state)}

    async def get(self, session_id: str) -> SessionRecord | None:
        record = self._live(session_id)
        return copy.copy(record) if record else None

    async def delete(self, session_id: str) -> bool:
        existed = self._live(session_id) is not None
        self._drop(session_id)
        return existed

    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        return list(self._history.get(session_id, ()))[offset: offset + limit]

    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        entries = list(self._history.get(session_id, ()))
        return entries[-limit:] if limit else []

    async def snapshot(self, session_id: str, version: int) -> dict[str, Any] | None:
        state = self._snapshots.get(session_id, {}).get(version)
        return copy.deepcopy(state) if state is not None else None

    async def count(self) -> int:
        return sum(1 for sid in list(self._records) if self._live(sid))

    async def purge_expired(self) -> int:
        before = len(self._records)
        for sid in list(self._records):
            self._live(sid)
        return before - len(self._records)

    async def _try_begin(self, session_id: str, owner: str, exclusive: bool) -> SessionRecord | None | bool:
        record = self._live(session_id)
        if record is None:
            return None
        lease = self._leases.get(session_id)
        if lease and lease[1] > time.time():
            return False
        self._leases[session_id] = (owner, time.time() + 120)
        return copy.copy(record)

    async def finish(self, session_id: str, owner: str, expected_version: int, commit: Commit) -> int:
        record = self._live(session_id)
        if record is None:
            raise VersionConflict(f"session {session_id} disappeared during the call")
        if record.version != expected_version:
            await self.abort(session_id, owner)
            raise VersionConflict(f"session {session_id} moved from version {expected_version} to {record.version}")
        if commit.state is not None:
            record.state = commit.state
            record.version += 1
            self._snapshots[session_id][record.version] = commit.state
            while len(self._snapshots[session_id]) > max(self.history_limit, 1):
                del self._snapshots[session_id][min(self._snapshots[session_id])]
        if commit.checklists is not None:
            record.checklists = copy.deepcopy(commit.checklists)
        if commit.config is not None:
            record.config = copy.deepcopy(commit.config)
        if commit.history is not None:
            self._history[session_id].append(commit.history)
        record.updated = time.time()
        record.expires = self.expiry()
        if self._leases.get(session_id, ("",))[0] == owner:
            del self._leases[session_id]
        return record.version

    async def abort(self, session_id: str, owner: str) -> None:
        if self._leases.get(session_id, ("",))[0] == owner:
            del self._leases[session_id]

    async def heartbeat(self) -> None:
        return None

    async def live_workers(self) -> int:
        return 1
