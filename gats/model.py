"""The data of the GATS loop: configuration, one turn's input, attempt records and the turn's result.

Statuses (never read a failure of the machinery as a success):

| attempt status | meaning |
|---|---|
| `success` | the judge found every objective met, and every call reached Gecko (see `select.attempt_status`) |
| `failed` | the judge found objectives unmet, or a call never reached Gecko (unknown tool, malformed arguments) |
| `unjudged` | the judge gave no verdict (it failed or Gecko did): never a success; the turn is `untested` |
| `skipped` | not judged because judging is off (the no-GATS baseline, `max_retries=0`) |
| `error` | the agent could not run for reasons outside it (LLM or Gecko down, request refused) |

A turn is `untested` when its checklist or any attempt failed for infrastructure reasons (`error`, `unjudged`; the
attempts stop there); otherwise it takes the status of its best attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from inference.agents.base import AgentRun, RetryFeedback
from inference.tools.execution import CallRecord
from utils.llm import UsageAggregator

AttemptStatus = Literal["success", "failed", "unjudged", "skipped", "error"]
TurnStatus = Literal["success", "failed", "skipped", "untested"]
INFRASTRUCTURE_STATUSES = frozenset({"error", "unjudged"})
"""Attempt statuses that mean the machinery failed (LLM, Gecko or the judge down): the turn is `untested`."""


@dataclass(frozen=True)
class GatsConfig:
    """How a turn is run."""

    max_retries: int = 2
    """Attempts after the first (0: one attempt, the no-GATS baseline)."""
    judge: bool | None = None
    """Judge every attempt. None: only when `max_retries > 0` (the baseline needs no verdict)."""
    generate_checklist: bool = False
    """Ask Gecko for the turn's checklist once (on the turn-start session) and judge every attempt on it."""
    fixed_checklist: tuple[str, ...] = ()
    """Objectives to judge against when no checklist is generated (empty: the judge's own default)."""
    collect_server_usage: bool = False
    """Read each attempt's session history for the LLM usage of Gecko's stages, its verdict included, failed calls
    too (pointless with rules engines); else the verdict's usage comes from the judge's reply."""
    keep_sessions: bool = True
    """Keep the attempts' forks and the turn-start session in Gecko (they expire with Gecko's session TTL), so the
    viewer can show each attempt's calls, verdict and feedback; False deletes them once judged."""
    feedback_chars: int | None = None
    """Most characters of calls in the retry feedback (calls beyond are left out, rejected ones last): set from the
    agent model's context window when its endpoint says (`inference.agents.ContextBudget`); None: every call."""

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")

    @property
    def judging(self) -> bool:
        """Whether attempts are judged."""
        return self.max_retries > 0 if self.judge is None else self.judge


@dataclass(frozen=True)
class TurnInput:
    """One user turn to solve in simulation."""

    task: str
    """The user's request as text: what the checklist and the judge are about."""
    messages: tuple[Mapping[str, Any], ...]
    """The conversation the agent is given, ending with this turn's user message."""
    base_session_id: str
    """The turn-start session; every attempt runs on a fork of it, so none sees another's effects."""
    previous_tasks: tuple[str, ...] = ()
    """Earlier user requests of the conversation (context for the checklist)."""
    expects_tool_call: bool = False
    """The request cannot be done without a tool call (told to the judge; a plain answer then fails the gate)."""


@dataclass(frozen=True)
class Objective:
    """One checklist item."""

    id: str
    description: str


@dataclass(frozen=True)
class Verdict:
    """The judge's verdict on one attempt."""

    success: bool
    score: float
    """Fraction of objectives judged met (0.0 with no objectives)."""
    remaining: tuple[str, ...]
    items: tuple[Mapping[str, Any], ...] = ()
    """Per objective: id, description, status, reasoning."""
    engine: str = ""


@dataclass(frozen=True)
class AttemptLatency:
    """Wall time of an attempt's phases, in seconds."""

    fork_s: float = 0.0
    agent_s: float = 0.0
    judge_s: float = 0.0
    total_s: float = 0.0


@dataclass(frozen=True)
class AttemptRecord:
    """Everything about one attempt."""

    index: int
    status: AttemptStatus
    session_id: str | None
    """The fork it ran on (None if the fork failed)."""
    run: AgentRun | None
    """What the agent did (a partial run when it failed; None if it never started)."""
    feedback: RetryFeedback | None
    """The feedback this attempt was given (None for the first)."""
    verdict: Verdict | None = None
    error: str | None = None
    """Why the attempt is `error` or `unjudged`."""
    usage: tuple[dict[str, Any], ...] = ()
    """LLM usage records of every role for this attempt (planner, validator, responder, state, judge)."""
    latency: AttemptLatency = field(default_factory=AttemptLatency)

    @property
    def calls(self) -> tuple[CallRecord, ...]:
        """The calls the agent made, as it made them."""
        return self.run.calls if self.run is not None else ()

    @property
    def final_text(self) -> str | None:
        """The agent's final answer."""
        return self.run.final_text if self.run is not None else None

    @property
    def validation_errors(self) -> int:
        """Calls that failed by the agent's doing (422 validation errors, unknown tools, malformed arguments, tool
        errors); calls an injected fault failed are `injected_errors`, not the agent's."""
        return sum(not call.outcome.ok and not _injected_error(call) for call in self.calls)

    @property
    def injected_errors(self) -> int:
        """Calls a fault policy failed (a 429, 503, time-out … that the state controller injected)."""
        return sum(_injected_error(call) for call in self.calls)

    @property
    def unrecovered_faults(self) -> int:
        """Calls a fault policy failed that no later identical call (same tool and arguments) got through."""
        calls = self.calls
        return sum(_injected_error(call) and not any(
            later.outcome.ok and later.name == call.name and later.arguments == call.arguments
            for later in calls[index + 1:]) for index, call in enumerate(calls))

    @property
    def unreached(self) -> tuple[CallRecord, ...]:
        """Failed calls that never reached Gecko, so no judge could see them."""
        return tuple(call for call in self.calls if not call.outcome.reached_backend)

    @property
    def score(self) -> float:
        """The judge's score; 0.0 when there is no verdict, or when a failed call never reached Gecko (the
        judge could not see it, so its verdict does not cover the attempt)."""
        if self.verdict is None or self.unreached:
            return 0.0
        return self.verdict.score

    def usage_by_role(self) -> dict[str, dict[str, Any]]:
        """Tokens, latency and cost per role (`UsageTotals.public()` form)."""
        return _by_role(self.usage)


@dataclass(frozen=True)
class TurnResult:
    """The outcome of one turn."""

    status: TurnStatus
    attempts: tuple[AttemptRecord, ...]
    best_index: int | None
    """The chosen attempt (None when the turn is `untested`)."""
    checklist: tuple[Objective, ...] | None = None
    """The objectives the attempts were judged on (None: the judge's default)."""
    checklist_error: str | None = None
    latency_s: float = 0.0

    @property
    def best(self) -> AttemptRecord | None:
        """The chosen attempt."""
        return None if self.best_index is None else self.attempts[self.best_index]

    @property
    def failure(self) -> str | None:
        """Why the turn is `untested` (the attempt or the checklist that failed, and its error); None otherwise."""
        if self.status != "untested":
            return None
        failed = [a for a in self.attempts if a.status in INFRASTRUCTURE_STATUSES]
        if failed:
            return f"attempt {failed[-1].index}: {failed[-1].error}"
        return self.checklist_error or "no attempt ran"

    @property
    def usage(self) -> tuple[dict[str, Any], ...]:
        """Usage records of every attempt."""
        return tuple(record for attempt in self.attempts for record in attempt.usage)

    def usage_by_role(self) -> dict[str, dict[str, Any]]:
        """Tokens, latency and cost per role over all attempts."""
        return _by_role(self.usage)


def _by_role(records: tuple[dict[str, Any], ...]) -> dict[str, dict[str, Any]]:
    aggregate = UsageAggregator(records)
    roles = aggregate.summary()["roles"]
    return {role: entry["total"] for role, entry in roles.items()}


def _injected_error(call: CallRecord) -> bool:
    """The call failed because a fault policy answered it with a service error (not because of the agent)."""
    return call.outcome.fault is not None and call.outcome.error_kind == "service_error"
