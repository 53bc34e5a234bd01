"""Session operations used by the HTTP layer: create, fork, and serialised state mutation."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

from gecko.sessions.model import Commit, SessionNotFound, SessionRecord, StateUnreadable, new_session_id
from gecko.sessions.store import SessionStore
from utils.jsonlimits import READABLE_DEPTH, is_readable


def _ensure_readable(state: dict[str, Any]) -> None:
    if not is_readable(state):
        raise StateUnreadable(f"the state would nest deeper than {READABLE_DEPTH} levels and could not be read "
                              "back; it was not stored")


async def create_session(store: SessionStore, config: dict[str, Any], state: dict[str, Any]) -> SessionRecord:
    """Store a new session; nothing is stored when its state could not be read back.

    Raises:
        StateUnreadable: the state nests deeper than `READABLE_DEPTH`.
    """
    _ensure_readable(state)
    record = SessionRecord(id=new_session_id(), config=config, state=state)
    await store.create(record)
    return record


async def fork_session(store: SessionStore, session_id: str,
                       config_of: Callable[[dict[str, Any]], dict[str, Any]] | None = None, *,
                       labels: dict[str, str] | None = None, note: str | None = None) -> SessionRecord:
    """New session with a copy of the state, config and checklists (not the history).

    The fork's config names its parent and the parent's version (`forked_from`, `fork_version`); `labels` go
    over the parent's, and `note` (why the fork exists) replaces the parent's.

    Args:
        store: the session store.
        session_id: the session to copy.
        config_of: turns the source's config into the fork's (default: a copy).
        labels: labels of the fork, over the parent's.
        note: why the fork exists (shown in the viewer).
    """
    source = await store.get(session_id)
    if source is None:
        raise SessionNotFound(session_id)
    config = {**(config_of or copy.deepcopy)(source.config), "forked_from": source.id,
              "fork_version": source.version}
    config.pop("note", None)
    if labels:
        config["labels"] = {**config.get("labels", {}), **labels}
    if note:
        config["note"] = note
    record = SessionRecord(id=new_session_id(), config=config, state=copy.deepcopy(source.state),
                           checklists=copy.deepcopy(source.checklists))
    await store.create(record)
    return record


async def mutate_session(
    store: SessionStore, session_id: str, change: Callable[[SessionRecord], Awaitable[Commit]]
) -> tuple[SessionRecord, int]:
    """Run `change` holding the session (queued like a tool call) and commit what it returns.

    Returns (record read, with the new state if any; new version).

    Raises:
        StateUnreadable: the new state nests deeper than `READABLE_DEPTH` (nothing is committed).
    """
    async with store.holding(session_id) as hold:
        record = await store.read(hold)
        if record is None:
            raise SessionNotFound(session_id)
        commit = await change(record)
        # The state this returns is read after the session went to the next caller: no later call of the turn may
        # change it in place (`gecko.sessions.owned`), so the turn's chain ends here.
        hold.owned.clear()
        if commit.state is not None:
            _ensure_readable(commit.state)
        if commit.history is not None and commit.state is not None:
            commit.history["state_version"] = record.version + 1
        version = await store.commit(hold, record, commit)
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
