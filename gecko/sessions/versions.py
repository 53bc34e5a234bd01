"""State versions as JSON-Patch deltas with a full checkpoint every K versions.

A commit that changes the state stores either the whole new state (a checkpoint) or the RFC 6902
patch from the previous version (a delta). Version N is rebuilt from the last checkpoint at or
before N plus the deltas after it, so storage grows with the size of the changes, and reading any
version costs at most K patch applications. The retention window (`max_versions`) is the same on
every store: the last `max_versions` versions are readable; older ones are dropped, physically a
little later (back to the checkpoint the oldest kept version needs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonpatch

TRIM_EVERY = 16
"""Stores drop history entries and versions that fell out of the window every TRIM_EVERY commits."""


@dataclass(frozen=True)
class Retention:
    """How long and how much of a session the store keeps (one behaviour on every store)."""

    ttl: float
    """Seconds of inactivity after which a session expires; the sweep then deletes it with its versions and history."""
    history_limit: int = 1000
    """Calls kept in a session's history, the most recent ones; 0 keeps every call (until the session expires)."""
    max_versions: int = 1000
    """State versions readable with `?version=N`, the most recent ones; 0 keeps every version."""
    checkpoint_every: int = 32
    """A full state is stored every K versions; the versions in between are stored as patches."""

    def oldest_version(self, current: int) -> int:
        """The oldest version still readable when the session is at `current`."""
        return max(0, current - self.max_versions + 1) if self.max_versions else 0

    def first_call(self, calls: int) -> int:
        """Sequence number (1-based) of the oldest history entry kept after `calls` calls."""
        return max(1, calls - self.history_limit + 1) if self.history_limit else 1

    def is_checkpoint(self, version: int, patch: list[dict[str, Any]] | None) -> bool:
        """Whether `version` is stored whole: every K versions, and whenever no patch is known."""
        return patch is None or version % self.checkpoint_every == 0


def rebuild(entries: list[tuple[int, bool, Any]], version: int) -> dict[str, Any] | None:
    """The state at `version` from `(version, is_checkpoint, state or patch)` rows in version order.

    The rows must start at a checkpoint and run without a gap up to `version`; otherwise None.
    """
    if not entries or not entries[0][1] or entries[-1][0] != version:
        return None
    state: Any = None
    expected = entries[0][0]
    for number, checkpoint, body in entries:
        if number != expected:
            return None
        state = body if checkpoint else jsonpatch.apply_patch(state, body, in_place=False)
        expected += 1
    return state
