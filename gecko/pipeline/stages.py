"""Interfaces of the pipeline stages. Each has a deterministic `rules` engine and may have an LLM one.

A Protocol declares every attribute its callers read. `Engines` holds one engine per server role of
`utils.roles.SERVER_ROLES`; `RoleEngines` is how a stage package says how to build them.

Stages receive small frozen dataclasses and return small dataclasses; they never touch the store or
HTTP. The runner (`gecko.pipeline.runner`) owns ordering, the session lease and the history entry.
LLM usage of a stage is appended to `CallContext.usage` (one dict per LLM call, see
`utils.llm` for the record format).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from gecko.pipeline.world.records import call_seed
from gecko.sessions.owned import Owned
from gecko.toolkits.model import Operation
from utils.roles import DEADLINE_SETTING, ENGINE_NONE, MAX_TOKENS_SETTING, ServerRole

if TYPE_CHECKING:
    from utils.llm import LLMClient
    from utils.settings import Settings

SemanticOutcome = Literal["valid", "invalid", "unchecked", "skipped"]
ItemStatus = Literal["success", "failed", "unknown"]


@dataclass(frozen=True)
class CallContext:
    """Everything a stage may look at for one tool call."""

    session_id: str
    operation: Operation
    arguments: dict[str, Any]
    state: dict[str, Any]
    recent_calls: list[dict[str, Any]] = field(default_factory=list)
    """Last few history entries of this session (compact form: tool, arguments, status, response)."""
    session_config: dict[str, Any] = field(default_factory=dict)
    usage: list[dict[str, Any]] = field(default_factory=list)
    """Stages append one usage record per LLM call here."""
    owned: Owned | None = None
    """Containers of `state` that a state change may change in place instead of copying (`gecko.sessions.owned`):
    those the session's earlier calls in this turn of its hold created. None: copy every container changed."""

    @cached_property
    def seed(self) -> str:
        """The seed of the call's generated values (`call_seed`), which the response and the state change share."""
        return call_seed(self.session_id, self.operation.tool_name, self.arguments)


@dataclass
class SemanticVerdict:
    outcome: SemanticOutcome
    errors: list[str] = field(default_factory=list)
    reason: str = ""
    """Why the check is `unchecked` (timeout, bad output…) or `skipped`."""


@dataclass
class Synthesis:
    body: Any
    engine: str
    fallback: str | None = None
    """`rules` when the LLM output could not be made to fit the schema."""
    notes: list[str] = field(default_factory=list)
    status: int = 200
    """The simulated HTTP status: 200, or the operation's declared not-found status (404) when the world model
    has no record with the requested id; the body is then that error response and the state does not change."""


@dataclass
class StateChange:
    state: dict[str, Any]
    patch: list[dict[str, Any]]
    """The RFC 6902 operations that turned the old state into `state`."""
    engine: str
    fallback: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RealCall:
    """A call executed on a real tool, reported back with `/update-state-from-real`."""

    name: str
    arguments: dict[str, Any]
    result: Any
    toolkit: str | None = None
    operation: Operation | None = None
    access: Literal["read", "write"] = "write"


@dataclass
class ChecklistItem:
    id: str
    description: str


@dataclass
class ItemVerdict:
    id: str
    description: str
    status: ItemStatus
    reasoning: str = ""


@dataclass
class JudgeInput:
    task: str
    checklist: list[ChecklistItem]
    state: dict[str, Any]
    calls: list[dict[str, Any]]
    agent_response: str | None
    tools: list[dict[str, Any]]
    usage: list[dict[str, Any]] = field(default_factory=list)
    expects_tool_call: bool = False
    """The caller says the task needs a tool call (e.g. a BFCL task outside the irrelevance categories)."""
    call_messages: list[str | int | None] | None = None
    """For each call, the model message that issued it, when the caller knows (calls of one message are parallel:
    identical calls in one message are deliberate, e.g. two draws from one distribution); None: unknown."""


@dataclass
class JudgeResult:
    items: list[ItemVerdict]
    engine: str
    panel: dict[str, Any] | None = None
    """A panel's record (`gecko.pipeline.judge.panel`): the vote, every judge's verdict or failure, agreement."""

    @property
    def success(self) -> bool:
        return bool(self.items) and all(i.status == "success" for i in self.items)

    @property
    def remaining(self) -> list[str]:
        return [i.description for i in self.items if i.status != "success"]


class JudgeFailure(RuntimeError):
    """The judge could not produce a verdict (infrastructure or unusable output). Never read as success."""


class CallStage(Protocol):
    """What the runner reads of every stage that runs inside a tool call."""

    engine: str
    """`rules` or the model alias (reported in `/health` and the history)."""
    needs_recent_calls: bool
    """The runner loads the session's last calls into `CallContext.recent_calls` for it."""


class SemanticValidator(CallStage, Protocol):
    """The semantic check of a call's arguments (the `validation` role)."""

    async def check(self, ctx: CallContext) -> SemanticVerdict: ...


class ResponseSynthesizer(CallStage, Protocol):
    """The response of a valid call (the `response` role)."""

    async def synthesize(self, ctx: CallContext) -> Synthesis: ...


class StateUpdater(CallStage, Protocol):
    """The task state after a call, at session start and from real tools (the `state` role)."""

    deferred: bool
    """Run after the response is sent; the session stays held until the update commits (LLM updaters)."""

    async def update(self, ctx: CallContext, response: Any) -> StateChange | None:
        """State after a successful call; None when nothing changes."""
        ...

    async def bootstrap(self, state: dict[str, Any], toolkits: list[str], usage: list[dict[str, Any]]) -> dict[str, Any]:
        """Enrich a freshly initialised state (LLM engines); rules return it unchanged."""
        ...

    async def apply_real(
        self, state: dict[str, Any], calls: list[RealCall], usage: list[dict[str, Any]]
    ) -> StateChange:
        """Fold real tool results into the state: reads recorded under `observed`, writes applied."""
        ...


class TaskJudge(Protocol):
    """Checklists and verdicts (the `judge` role)."""

    engine: str
    """`rules` or the model alias."""

    async def checklist(
        self, task: str, previous_tasks: list[str], tools: list[dict[str, Any]], usage: list[dict[str, Any]]
    ) -> list[ChecklistItem]: ...

    async def judge(self, data: JudgeInput) -> JudgeResult:
        """Raises JudgeFailure when no verdict can be produced."""
        ...


@dataclass
class Engines:
    """The engine of each server role, one field per row of `utils.roles.SERVER_ROLES` (None: `none`).

    `validation` is None also for `rules`: the rules half of validation is the syntactic check, which
    the runner always runs.
    """

    validation: SemanticValidator | None
    response: ResponseSynthesizer
    state: StateUpdater | None
    judge: TaskJudge
    llm_client: LLMClient | None = None
    """The client the LLM engines share (None when no role uses a model); closed at shutdown."""

    def engine_of(self, role: ServerRole) -> str:
        """The engine name serving `role` (`rules`, `none` or the model alias)."""
        engine = getattr(self, role.name)
        return ENGINE_NONE if engine is None else str(engine.engine)

    def call_stages(self) -> list[CallStage]:
        """The engines that run inside a tool call (the judge runs on request)."""
        return [e for e in (self.validation, self.response, self.state) if e is not None]


RulesT = TypeVar("RulesT")
"""A role's rules engine (None where the role has none)."""
EngineT = TypeVar("EngineT")
"""A role's engine: the stage's Protocol."""


@dataclass(frozen=True)
class EngineBuild(Generic[RulesT]):
    """What a role's LLM engine builder receives."""

    role: ServerRole
    """The role being built (per-role settings: `settings.role_value(role, suffix)`)."""
    model: str
    """The model alias."""
    client: LLMClient
    """The worker's shared client."""
    fallback: RulesT
    """The role's rules engine (None where the role has none), for engines that fall back to it."""
    settings: Settings
    toolkit_info: Mapping[str, Any]
    """Toolkit name → {description, operations} (for the state bootstrap prompt)."""

    def limits(self) -> dict[str, Any]:
        """The role's output cap and deadline from the settings (`--<role>-max-tokens`, `--<role>-deadline`),
        as the keyword arguments `max_tokens` and `deadline_s` of every LLM engine."""
        return {"max_tokens": self.settings.role_value(self.role, MAX_TOKENS_SETTING.suffix),
                "deadline_s": self.settings.role_value(self.role, DEADLINE_SETTING.suffix)}


@dataclass(frozen=True)
class RoleEngines(Generic[RulesT, EngineT]):
    """How a stage package builds its server role's engines: its `role.py` exports one as `ENGINES`, typed
    `RoleEngines[<rules engine>, <the stage's Protocol>]` so the checker holds both builders to the Protocol."""

    rules: Callable[[], RulesT]
    """The `rules` engine (None: the role does nothing beyond what the runner always does)."""
    llm: Callable[[EngineBuild[RulesT]], EngineT]
    """The engine for a model alias; import the LLM module inside, so it loads only when a model is set."""
