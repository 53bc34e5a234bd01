"""Request and response bodies of the HTTP API (pydantic, named by role)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gecko.upstream.pool import SessionMode
from utils.faults import FaultPolicy
from utils.jsontypes import JsonBool, JsonInt


class SessionConfig(BaseModel):
    """Per-session configuration."""

    model_config = ConfigDict(extra="forbid")
    toolkits: list[str] | None = None
    """Only these toolkits may be called in the session (None = all)."""
    record_reads: JsonBool = False
    """Also record read-call results in the state (`observed`), the paper's "synthesis mode"."""
    mode: SessionMode = "simulate"
    """`simulate` every call; `hybrid`: reads of toolkits with an upstream (`x-gecko-upstream`) run on the real
    service and are recorded as observations, writes are simulated; `passthrough`: every call runs on the
    upstream and is recorded (toolkits without one are refused)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Free-form labels (run id, task id…) shown in history and listings (`GET /sessions?label=KEY=VALUE`)."""
    faults: FaultPolicy | None = None
    """The session's fault policy (state controller); forks inherit it. None: the server's `--faults`, if any."""
    note: str | None = Field(default=None, max_length=20000)
    """Free text shown in the viewer: why the session exists (GATS: the feedback its attempt was given)."""
    forked_from: str | None = None
    """Set by the server on forks: the session it was forked from."""
    fork_version: JsonInt | None = None
    """Set by the server on forks: the state version of the parent it was forked at."""


class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    config: SessionConfig = Field(default_factory=SessionConfig)
    state: dict[str, Any] = Field(default_factory=dict)


class ForkRequest(BaseModel):
    """Optional body of `POST /sessions/{id}/fork`."""

    model_config = ConfigDict(extra="forbid")
    faults: FaultPolicy | None = None
    """Replaces the inherited fault policy (null: none of the session's own, so the server's applies)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels of the fork, over the parent's (GATS: `attempt`)."""
    note: str | None = Field(default=None, max_length=20000)
    """Why the fork exists (GATS: the feedback its attempt is given), shown in the viewer."""


class FaultsPublic(BaseModel):
    """`GET|PUT|DELETE /sessions/{id}/faults`: the policy in effect, its controller state, what it injected."""

    session_id: str
    source: str
    """`session` (its own policy), `server` (`--faults`) or `none`."""
    policy: dict[str, Any] | None
    state: dict[str, Any]
    """Calls counted, successful writes, injections per rule, an open session-expiry window."""
    injected: dict[str, Any]
    """Injections recorded in the kept history: total, by level, kind and rule."""
    constraints: list[dict[str, Any]] = Field(default_factory=list)
    """Checklist items added or changed by constraint interventions."""


class SessionPublic(BaseModel):
    session_id: str
    config: dict[str, Any]
    state: dict[str, Any]
    version: int
    created: float
    updated: float
    expires: float
    status: str = "new"
    """new, ok, rejected (a call was rejected), success / failed (the judge's last verdict), unjudged."""
    calls: int = 0
    """History entries written so far (calls, state changes, verdicts)."""
    checklists: list[dict[str, Any]] = Field(default_factory=list)
    """Checklists made in this session (`task`, `items`, `engine`), the latest last."""


class StateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    state: dict[str, Any]


class InitStateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    state: dict[str, Any] = Field(default_factory=dict)
    involved_classes: list[str] | None = None
    """Toolkits whose declared defaults (`x-gecko-default-state`) are merged in; None = every toolkit that declares one."""


class RealToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    toolkit: str | None = None


class RealCallsBody(BaseModel):
    """Real tool calls to fold into the state: `tool_calls` (one or more) and/or `tool_call`."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"anyOf": [
        {"required": ["tool_calls"], "properties": {"tool_calls": {"minItems": 1}}},
        {"required": ["tool_call"], "properties": {"tool_call": {"type": "object"}}},
    ]})
    tool_calls: list[RealToolCall] = Field(default_factory=list)
    tool_call: RealToolCall | None = None
    read_only_sync_policy: str | None = None
    """Accepted for compatibility with the reference client; reads are always recorded under `observed`."""

    def calls(self) -> list[RealToolCall]:
        return [*self.tool_calls, *([self.tool_call] if self.tool_call else [])]


class ChecklistRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: str = Field(min_length=1)
    previous_tasks: list[str] = Field(default_factory=list)


class ChecklistItemPublic(BaseModel):
    id: str
    description: str


class ChecklistPublic(BaseModel):
    task: str
    items: list[ChecklistItemPublic]
    engine: str
    cached: bool = False
    usage: list[dict[str, Any]] = Field(default_factory=list)
    """LLM usage records of producing this checklist (empty for the rules engine or a cached checklist)."""


class JudgeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: str | None = None
    """Defaults to the last task a checklist was made for in this session."""
    agent_response: str | None = None
    checklist: list[ChecklistItemPublic] | None = None
    since_version: JsonInt | None = None
    """Only judge calls made after this state version (None = all calls of the session)."""
    expects_tool_call: JsonBool = False
    """The task cannot be done without a tool call: the gating judge fails an attempt with none accepted."""


class ItemVerdictPublic(BaseModel):
    id: str
    description: str
    status: str
    reasoning: str


class JudgePublic(BaseModel):
    success: bool
    items: list[ItemVerdictPublic]
    remaining: list[str]
    engine: str
    usage: list[dict[str, Any]] = Field(default_factory=list)
    """LLM usage records of this verdict (and of a checklist made for it)."""
    panel: dict[str, Any] | None = None
    """With a judge panel: the vote, every judge's verdict, the judges excluded (failed) and their agreement."""


class SessionIdPublic(BaseModel):
    """`GET /session-id`."""

    session_id: str
    message: str


class StateSetPublic(BaseModel):
    """`POST /set-session-state`."""

    message: str
    version: int


class StateInitPublic(BaseModel):
    """`POST /init-session-state`."""

    message: str
    version: int
    state: dict[str, Any]


class SessionStatePublic(BaseModel):
    """`GET /get-session-state`."""

    state: dict[str, Any]
    version: int


class RealSyncPublic(BaseModel):
    """`POST /update-state-from-real`."""

    success: bool
    version: int
    updated_state: dict[str, Any]


class HistoryPublic(BaseModel):
    """`GET /sessions/{id}/history`: one entry per call (request, validation, response, engines, timings, usage)."""

    session_id: str
    offset: int
    calls: list[dict[str, Any]]


class StateAtPublic(BaseModel):
    """`GET /sessions/{id}/state`."""

    session_id: str
    version: int
    state: dict[str, Any]


class UsagePublic(BaseModel):
    """`GET /sessions/{id}/usage`: LLM usage per role (with its models) and overall."""

    session_id: str
    roles: dict[str, Any]
    total: dict[str, Any]
    faults: dict[str, Any]
    """Injections recorded in the history: total, by level, kind and rule."""


class ToolPublic(BaseModel):
    """One tool in `GET /toolkits`."""

    name: str
    call_name: str
    """The name `POST /{toolkit}/{name}` takes: the operationId, or its alias when that is not one URL segment."""
    original_name: str
    method: str
    path: str
    access: str
    summary: str
    has_response_schema: bool


class ToolDetailPublic(ToolPublic):
    """One tool in `GET /toolkits/{name}`, with its schemas."""

    description: str
    arguments_schema: dict[str, Any]
    response_schema: dict[str, Any] | bool | None
    world: dict[str, Any] | None = None
    """Its place in the world model: the resource and action the rules engines bind it to (null: none)."""


class ToolkitSummaryPublic(BaseModel):
    """One toolkit in `GET /toolkits`."""

    name: str
    title: str
    version: str
    source: str
    openapi: str
    tool_count: int
    has_default_state: bool
    tools: list[ToolPublic] | None = None


class ToolkitsPublic(BaseModel):
    """`GET /toolkits`."""

    total: int
    offset: int
    toolkits: list[ToolkitSummaryPublic]


class ToolkitPublic(BaseModel):
    """`GET /toolkits/{name}`."""

    name: str
    title: str
    description: str
    source: str
    default_state: dict[str, Any] | None
    tools: list[ToolDetailPublic]


class RolePublic(BaseModel):
    """A server role in `/health`: its configured model and the engine in use."""

    model: str
    engine: str
    endpoint: dict[str, Any] | None = None
    """With a model: its endpoint's capabilities and where each comes from (a panel: `{"panel": [each judge's]}`)."""


class WorkersPublic(BaseModel):
    configured: int
    live: int


class HealthPublic(BaseModel):
    """`GET /health`: `status` and `version` for everyone; the rest only with the key, on a server that has one."""

    status: str
    version: str
    service: str | None = None
    pid: int | None = None
    uptime_seconds: float | None = None
    roles: dict[str, RolePublic] | None = None
    state_model_enabled: bool | None = None
    offline: bool | None = None
    store: str | None = None
    toolkits: int | None = None
    toolkits_loaded: int | None = None
    """Toolkits this worker has loaded so far: all of them, except on a directory with a prebuilt index (`gecko pool
    build`), where each loads on its first use."""
    tools: int | None = None
    workers: WorkersPublic | None = None
    sessions: int | None = None


class ToolHitPublic(BaseModel):
    """One tool found by `GET /tools/search`."""

    toolkit: str
    name: str
    call_name: str
    """The name `POST /{toolkit}/{name}` takes (`issues/create` → `issues_create`)."""
    original_name: str
    app: str
    source: str
    access: str
    summary: str
    call: str
    """The route that calls the tool: `POST /{toolkit}/{call_name}`."""
    score: float


class ToolSearchPublic(BaseModel):
    """`GET /tools/search`: the best-matching tools, best first."""

    query: str
    k: int
    engine: Literal["bm25", "dense", "hybrid"]
    """The ranking these hits come from (`mode`, or the server's default: `hybrid` when dense retrieval is
    available, else `bm25`); each hit's `score` is on its scale (BM25, cosine, or fused reciprocal ranks)."""
    indexed_tools: int
    dense_unavailable: str | None = None
    """Why dense and hybrid ranking cannot be had on this server (not installed, or turned off); null when they can."""
    hits: list[ToolHitPublic]
