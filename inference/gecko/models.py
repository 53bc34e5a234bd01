"""Bodies of Gecko's responses as the client reads them (pydantic; unknown fields are kept, not refused)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Body(BaseModel):
    model_config = ConfigDict(extra="allow")


class RoleInfo(_Body):
    """Model and engine of one server role."""

    model: str
    engine: str


class HealthInfo(_Body):
    """`GET /health`."""

    status: str
    service: str = "gecko"
    version: str = ""
    roles: dict[str, RoleInfo] = Field(default_factory=dict)
    """validator, responder, state, judge."""
    state_model_enabled: bool = False
    offline: bool = True
    """True when every role runs a rules engine (or none): no LLM calls, no usage to collect."""
    store: str = ""
    toolkits: int = 0
    tools: int = 0
    workers: dict[str, int] = Field(default_factory=dict)


class SessionInfo(_Body):
    """`POST /sessions`, `GET /sessions/{id}`, `POST /sessions/{id}/fork`."""

    session_id: str
    config: dict[str, Any] = Field(default_factory=dict)
    state: dict[str, Any] = Field(default_factory=dict)
    version: int = 0
    created: float = 0.0
    updated: float = 0.0
    expires: float = 0.0


class ChecklistItem(_Body):
    """One objective of a task."""

    id: str
    description: str


class ChecklistReply(_Body):
    """`POST /sessions/{id}/checklist`."""

    task: str
    items: list[ChecklistItem]
    engine: str


class ItemVerdict(_Body):
    """The judge's verdict on one checklist item."""

    id: str
    description: str
    status: str
    """`success`, `failed` or `unknown`."""
    reasoning: str = ""


class JudgeReply(_Body):
    """`POST /sessions/{id}/judge`."""

    success: bool
    items: list[ItemVerdict]
    remaining: list[str] = Field(default_factory=list)
    engine: str = ""
    usage: list[dict[str, Any]] = Field(default_factory=list)
    """LLM usage of the judge when the server reports it (absent from current servers)."""


class StateReply(_Body):
    """`GET /get-session-state`, `GET /sessions/{id}/state`, `POST /update-state-from-real`."""

    state: dict[str, Any] = Field(default_factory=dict)
    version: int = 0


class ToolSearchHit(_Body):
    """One tool found by `GET /tools/search`."""

    toolkit: str
    name: str
    """The tool's operationId in its toolkit."""
    original_name: str = ""
    app: str = ""
    source: str = ""
    access: str = ""
    summary: str = ""
    call: str = ""
    score: float = 0.0


class ToolSearchReply(_Body):
    """`GET /tools/search`: the best-matching tools, best first."""

    query: str
    k: int
    engine: str = ""
    """The ranking the hits come from: `bm25`, `dense` or `hybrid`."""
    indexed_tools: int = 0
    dense_unavailable: str | None = None
    """Why the server cannot rank densely (None when it can)."""
    hits: list[ToolSearchHit] = Field(default_factory=list)
