"""Session operations used by the HTTP layer: create, fork, and serialised state mutation."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

from gecko.sessions.model import Commit, SessionNotFound, SessionRecord, new_session_id
from gecko.sessions.store import SessionStore


async def create_session(store: SessionStore, config: dict[str, Any], state: dict[str, Any]) -> SessionRecord:
    record = SessionRecord(id=new_session_id(), config=config, state=state)
    await store.create(record)
    return record


async def fork_session(store: SessionStore, session_id: str) -> SessionRecord:
    """New session with a copy of the state, config and checklists (not the history)."""
    source = await store.get(session_id)
    if source is None:
        raise SessionNotFound(session_id)
    config = {**copy.deepcopy(source.config), "forked_from": source.id}
    record = SessionRecord(id=new_session_id(), config=config, state=copy.deepcopy(source.state),
                           checklists=copy.deepcopy(source.checklists))
    await store.create(record)
    return record


async def mutate_session(
    store: SessionStore, session_id: str, change: Callable[[SessionRecord], Awaitable[Commit]]
) -> tuple[SessionRecord, int]:
    """Run `change` under the session's lease and commit what it returns; return (record read, new version)."""
    async with store.local_lock(session_id):
        record, owner = await store.begin(session_id, exclusive=True)
        if record is None:
            raise SessionNotFound(session_id)
        try:
            commit = await change(record)
        except BaseException:
            await store.abort(session_id, owner)
            raise
        version = await store.finish(session_id, owner, record.version, commit)
        if commit.state is not None:
            record.state = commit.state
        return record, version


def deep_merge_defaults(state: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """`state` over `defaults`: keys present in `state` win, nested dicts merged recursively."""
    merged = copy.deepcopy(defaults)
    for key, value in state.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge_defaults(value, merged[key])
        else:
            merged[key] = copy.deepcopy(value)
    return merged
