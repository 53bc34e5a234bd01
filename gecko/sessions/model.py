"""Session records as the stores keep them (dataclasses inside; pydantic models live in gecko.api)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any


class SessionNotFound(LookupError):
    """No live session with that id (never created, deleted, or expired)."""


class SessionBusy(RuntimeError):
    """Another call held the session longer than the wait limit."""


class VersionGone(LookupError):
    """The state version asked for is outside the retention window (or was never made)."""


class StateUnreadable(ValueError):
    """A state that could not be read back once stored (nested too deep for the serializers)."""


class VersionConflict(RuntimeError):
    """Compare-and-set failed: the state changed since it was read."""


def new_session_id() -> str:
    return str(uuid.uuid4())


@dataclass
class SessionRecord:
    """A session: config, state document and its version, checklist cache, timestamps."""

    id: str
    config: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    calls: int = 0
    """History entries appended so far (the sequence number of the last one)."""
    checklists: dict[str, Any] = field(default_factory=dict)
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    expires: float = 0.0
    status: str = "new"
    """At a glance (see `gecko.sessions.listing`): new, ok, rejected, success, failed, unjudged."""
    tags: list[str] = field(default_factory=list)
    """Indexed for listings: `label:K=V`, `toolkit:NAME`, `parent:ID` (see `gecko.sessions.listing`)."""
    base_version: int = 0
    """The last version stored whole (a checkpoint, see `gecko.sessions.versions`)."""
    base_bytes: int = 0
    """Its size as stored."""
    delta_bytes: int = 0
    """Bytes of the deltas stored after it."""


@dataclass
class Commit:
    """What one finished call writes, atomically, when it releases the session."""

    history: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    """New state; None leaves state and version unchanged."""
    patch: list[dict[str, Any]] | None = None
    """RFC 6902 patch from the state read to `state`; stored instead of the whole state (None: store it whole)."""
    checklists: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    status: str | None = None
    """New status of the session (set by `SessionStore.commit` from `history`; None: unchanged)."""
    tags: list[str] | None = None
    """The session's tags after the commit, when it adds some (set by `SessionStore.commit`)."""
    stored: str | None = None
    """The new version as the store writes it: the state or the patch as JSON text (set by `SessionStore.commit`)."""
    checkpoint: bool = False
    """`stored` is the whole state (set by `SessionStore.commit`)."""
