"""In-process session store: for tests and single-worker runs.

Versions are kept as the store writes them elsewhere: each commit's stored form (patch or checkpoint) decoded
into a value of its own, never the pipeline's state object (whose containers a turn's next call may change in
place, `gecko.sessions.owned`); a read fills in the state like every store (`SessionStore._load_state`). History
entries are treated as immutable values once stored, so records are copied shallowly; only caller-supplied input
is deep-copied. One process means no cross-process lease: the per-session FIFO of `SessionStore` is
the whole queue.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from typing import Any

from gecko.sessions.listing import MAX_SCAN, SessionPage, SessionQuery, SessionSummary, page_of
from gecko.sessions.model import Commit, SessionNotFound, SessionRecord, VersionConflict
from gecko.sessions.store import SessionStore
from gecko.sessions.versions import TRIM_EVERY, Retention, account_version
from utils.jsonutil import dumps_compact, loads


class MemoryStore(SessionStore):
    """Dicts in one process. `--workers 1` only (settings refuse it with several workers)."""

    backend = "memory"

    def __init__(self, retention: Retention) -> None:
        super().__init__(retention)
        self._records: dict[str, SessionRecord] = {}
        self._history: dict[str, deque[dict[str, Any]]] = {}
        self._versions: dict[str, dict[int, tuple[bool, Any]]] = {}

    def _live(self, session_id: str) -> SessionRecord | None:
        record = self._records.get(session_id)
        if record is not None and record.expires < time.time():
            self._drop(session_id)
            return None
        return record

    def _drop(self, session_id: str) -> None:
        self._records.pop(session_id, None)
        self._history.pop(session_id, None)
        self._versions.pop(session_id, None)

    async def create(self, record: SessionRecord) -> None:
        record.expires = self.expiry()
        self.prepare_new(record)
        self._records[record.id] = copy.deepcopy(record)
        self._history[record.id] = deque(maxlen=self.retention.history_limit or None)
        self._versions[record.id] = {record.version: (True, copy.deepcopy(record.state))}
        self._records[record.id].base_version = record.version
        self._records[record.id].base_bytes = len(dumps_compact(record.state))
        self._records[record.id].state = {}  # read from the versions (see the module docstring)

    async def get(self, session_id: str) -> SessionRecord | None:
        live = self._live(session_id)
        if live is None:
            return None
        record = copy.copy(live)
        await self._load_state(record)  # never trimmed meanwhile: one process, no await between
        return record

    async def delete(self, session_id: str) -> bool:
        existed = self._live(session_id) is not None
        self._drop(session_id)
        return existed

    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        return list(self._history.get(session_id, ()))[offset: offset + limit]

    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        entries = list(self._history.get(session_id, ()))
        return entries[-limit:] if limit else []

    async def _version_rows(self, session_id: str, version: int, after: int = -1) -> list[tuple[int, bool, Any]]:
        stored = self._versions.get(session_id, {})
        start = version
        while start > after + 1 and start in stored and not stored[start][0]:
            start -= 1
        # copies: the caller may patch the rows in place, and stored states and patches are shared values
        return copy.deepcopy([(v, *stored[v]) for v in range(start, version + 1) if v in stored])

    async def count(self) -> int:
        return sum(1 for sid in list(self._records) if self._live(sid))

    async def list_sessions(self, query: SessionQuery) -> SessionPage:
        # records are kept in creation order (dicts keep insertion order): walk them backwards
        now, found, examined = time.time(), [], 0
        stopped_at: tuple[float, str] | None = None
        for record in reversed(list(self._records.values())):
            if record.expires < now or not query.before_cursor(record.created, record.id):
                continue
            examined += 1
            if query.matches(record.status, record.tags):
                found.append(SessionSummary(record.id, record.created, record.updated, record.status, record.calls,
                                            record.version, record.config, list(record.tags)))
                if len(found) > query.limit:
                    break
            if examined >= MAX_SCAN:
                stopped_at = (record.created, record.id)
                break
        page = page_of(found, query, stopped_at)
        if query.cursor is None:
            page.total = sum(1 for r in self._records.values() if r.expires >= now and query.matches(r.status, r.tags))
        return page

    async def purge_expired(self) -> int:
        before = len(self._records)
        for sid in list(self._records):
            self._live(sid)
        return before - len(self._records)

    async def _lease_try(self, session_id: str, owner: str) -> bool:
        return True

    async def _lease_release(self, session_id: str, owner: str) -> bool:
        return False

    async def _commit(self, record: SessionRecord, commit: Commit, release: str | None) -> tuple[int, int, bool]:
        stored = self._live(record.id)
        if stored is None:
            raise SessionNotFound(record.id)
        if stored.version != record.version:
            raise VersionConflict(f"session {record.id} moved from version {record.version} to {stored.version}")
        if commit.state is not None:
            assert commit.stored is not None, "a commit with a state is prepared by SessionStore.commit"
            stored.version += 1
            versions = self._versions[record.id]
            checkpoint = commit.checkpoint or commit.patch is None
            versions[stored.version] = (checkpoint, loads(commit.stored))
            account_version(stored, stored.version, len(commit.stored), checkpoint)
            if self.retention.max_versions and stored.version % TRIM_EVERY == 0:
                _trim_versions(versions, self.retention.oldest_version(stored.version))
        if commit.checklists is not None:
            stored.checklists = copy.deepcopy(commit.checklists)
        if commit.config is not None:
            stored.config = copy.deepcopy(commit.config)
        if commit.status is not None:
            stored.status = commit.status
        if commit.tags is not None:
            stored.tags = list(commit.tags)
        if commit.history is not None:
            stored.calls += 1
            self._history[record.id].append(commit.history)
        stored.updated = time.time()
        stored.expires = self.expiry()
        return stored.version, stored.calls, False

    async def heartbeat(self) -> None:
        return None

    async def live_workers(self) -> int:
        return 1


def _trim_versions(versions: dict[int, tuple[bool, Any]], oldest: int) -> None:
    """Drop versions before the checkpoint that `oldest` is rebuilt from."""
    base = oldest
    while base > 0 and (base not in versions or not versions[base][0]):
        base -= 1
    for number in range(next(iter(versions), base), base):  # keys are in version order
        versions.pop(number, None)
