"""Interfaces of the pipeline stages. Each has a deterministic `rules` engine and may have an LLM one.

Stages receive small frozen dataclasses and return small dataclasses; they never touch the store or
HTTP. The runner (`gecko.pipeline.runner`) owns ordering, the session lease and the history entry.
LLM usage of a stage is appended to `CallContext.usage` (one dict per LLM call, see
`utils.llm` for the record format).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from gecko.toolkits.model import Operation

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


@dataclass
class JudgeResult:
    items: list[ItemVerdict]
    engine: str

    @property
    def success(self) -> bool:
        return bool(self.items) and all(i.status == "success" for i in self.items)

    @property
    def remaining(self) -> list[str]:
        return [i.description for i in self.items if i.status != "success"]


class JudgeFailure(RuntimeError):
    """The judge could not produce a verdict (infrastructure or unusable output). Never read as success."""


class SemanticValidator(Protocol):
    engine: str

    async def check(self, ctx: CallContext) -> SemanticVerdict: ...


class ResponseSynthesizer(Protocol):
    engine: str

    async def synthesize(self, ctx: CallContext) -> Synthesis: ...


class StateUpdater(Protocol):
    engine: str

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
    engine: str

    async def checklist(
        self, task: str, previous_tasks: list[str], tools: list[dict[str, Any]], usage: list[dict[str, Any]]
    ) -> list[ChecklistItem]: ...

    async def judge(self, data: JudgeInput) -> JudgeResult:
        """Raises JudgeFailure when no verdict can be produced."""
        ...


@dataclass
class Engines:
    """The engine chosen for each role; `semantic`/`state` are None when disabled (`none`)."""

    semantic: SemanticValidator | None
    synthesizer: ResponseSynthesizer
    state: StateUpdater | None
    judge: TaskJudge
