"""Bodies of the read-only session views (`GET /sessions`, `/sessions/{id}/tree`, `/sessions/{id}/diff`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class SessionSummaryPublic(BaseModel):
    """A session at a glance (no state, no history)."""

    session_id: str
    created: float
    updated: float
    status: str
    """new, ok, rejected (a call was rejected), success / failed (the judge's last verdict), unjudged."""
    calls: int
    """History entries written (calls, state changes, verdicts)."""
    version: int
    labels: dict[str, str]
    toolkits: list[str]
    """Its `toolkits` config, or the toolkits it called when it has none."""
    parent: str | None
    """The session it was forked from."""
    fork_version: int | None
    """The parent's state version at the fork."""
    note: str | None
    """Why it exists (GATS: the feedback its attempt was given)."""
    mode: str


class SessionListPublic(BaseModel):
    """One page of `GET /sessions`, newest first."""

    sessions: list[SessionSummaryPublic]
    next_cursor: str | None
    """Pass as `cursor` for the next page; None on the last page."""
    total: int | None = None
    """Sessions matching the filters, on the first page when the store counts them cheaply."""


class TreeNodePublic(SessionSummaryPublic):
    """A session of a fork tree with its forks."""

    verdict: dict[str, Any] | None = None
    """The judge's last verdict on it: success, items (per item status and reasoning), remaining, engine; or
    `status` 502 and `error` when the judge gave none."""
    children: list[TreeNodePublic] = Field(default_factory=list)
    """Its forks, oldest first."""
    truncated: bool = False
    """Some forks are not shown (more than the tree's limits)."""


class TreePublic(BaseModel):
    """The fork tree a session belongs to."""

    session_id: str
    root: TreeNodePublic
    path: list[str]
    """Session ids from the root down to the session asked for."""


class DiffPublic(BaseModel):
    """What one state version changed."""

    session_id: str
    from_version: int
    to_version: int
    patch: list[dict[str, Any]]
    """RFC 6902 operations from `from_version` to `to_version`."""
