"""The plan handed to the real run: the best simulated attempt's calls, each argument marked by where its
value came from, rendered from `prompts/real_plan.md`; and how far the real calls diverged from it.

Provenance (after the reference's "executable plan"): an argument value that appears literally in the
context (the user's messages, the initial state) is `keep`; any other value (it came from a simulated
tool result, or is unexplained) is `re-derive`. The plan is advice: the real agent's calls are what count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any, Literal

from gats.model import AttemptRecord
from inference.tools.execution import CallRecord
from utils.jsonutil import dumps_compact
from utils.llm import Prompt, load_prompt

PLAN_PROMPT_PATH = Path(__file__).resolve().parent / "prompts" / "real_plan.md"
PLANNABLE_STATUSES = ("success", "skipped")
"""Best-attempt statuses that yield a plan (judged complete, or not judged at all); otherwise no plan."""
Provenance = Literal["keep", "re-derive"]


def load_plan_prompt(path: Path | None = None) -> Prompt:
    """The plan template (default: `prompts/real_plan.md`)."""
    return load_prompt(path or PLAN_PROMPT_PATH)


@dataclass(frozen=True)
class PlanStep:
    """One planned call."""

    name: str
    """The tool's original name."""
    agent_name: str
    arguments: Mapping[str, Any]
    provenance: Mapping[str, Provenance]


@dataclass(frozen=True)
class Plan:
    """The advice given to the real run."""

    attempt: int
    """Index of the simulated attempt it comes from."""
    status: str
    steps: tuple[PlanStep, ...]
    text: str
    """The rendered plan message."""


def _appears(value: Any, context: str) -> bool:
    if isinstance(value, bool) or value is None:
        return True  # flags and nulls carry no information from a result
    if isinstance(value, (list, tuple)):
        return all(_appears(item, context) for item in value)
    if isinstance(value, Mapping):
        return all(_appears(item, context) for item in value.values())
    text = str(value)
    return bool(text) and text in context


def provenance(arguments: Mapping[str, Any], context: str) -> dict[str, Provenance]:
    """`keep` for each argument whose value appears literally in `context`, else `re-derive`."""
    return {key: "keep" if _appears(value, context) else "re-derive" for key, value in arguments.items()}


def _step_line(number: int, step: PlanStep) -> str:
    marks = ", ".join(f"{k}: {v}" for k, v in step.provenance.items()) or "no arguments"
    return f"{number}. {step.agent_name}({dumps_compact(dict(step.arguments))})  [{marks}]"


def build_plan(attempt: AttemptRecord | None, context: Sequence[str], prompt: Prompt) -> Plan | None:
    """The plan from the best simulated attempt, or None when there is none worth following.

    Args:
        attempt: The best simulated attempt.
        context: Texts whose literals are trusted (user messages, the initial state as JSON).
        prompt: The template, with `$attempt`, `$verdict` and `$steps`.
    """
    if attempt is None or attempt.status not in PLANNABLE_STATUSES:
        return None
    joined = "\n".join(context)
    steps = tuple(
        PlanStep(call.name, call.agent_name, dict(call.arguments), provenance(call.arguments, joined))
        for call in attempt.calls if call.outcome.ok and call.arguments is not None
    )
    if not steps:
        return None
    verdict = "judged complete" if attempt.status == "success" else "not judged"
    lines = "\n".join(_step_line(i, s) for i, s in enumerate(steps, start=1))
    text = Template(prompt.text).safe_substitute(attempt=attempt.index + 1, verdict=verdict, steps=lines)
    return Plan(attempt.index, attempt.status, steps, text)


@dataclass(frozen=True)
class Divergence:
    """How the real calls compare with the plan (calls matched by name and exact arguments, as multisets)."""

    planned: int
    executed: int
    """Real calls that reached the real tools."""
    matched: int
    unplanned: tuple[str, ...]
    """Real calls not in the plan (`name(args)`)."""
    skipped: tuple[str, ...]
    """Planned calls the real run did not make."""

    @property
    def diverged(self) -> bool:
        """Whether the real run did anything other than exactly the plan."""
        return bool(self.unplanned or self.skipped)

    def public(self) -> dict[str, Any]:
        """JSON form."""
        return {"planned": self.planned, "executed": self.executed, "matched": self.matched,
                "unplanned": list(self.unplanned), "skipped": list(self.skipped), "diverged": self.diverged}


def _key(name: str, arguments: Mapping[str, Any] | None) -> str:
    return f"{name}({dumps_compact(dict(arguments or {}))})"


def divergence(plan: Plan | None, real_calls: Sequence[CallRecord]) -> Divergence:
    """Compare the real calls with the plan (no plan: every real call is unplanned)."""
    planned = Counter(_key(s.name, s.arguments) for s in plan.steps) if plan else Counter()
    executed = Counter(_key(c.name, c.arguments) for c in real_calls if c.outcome.reached_backend)
    matched = planned & executed
    return Divergence(sum(planned.values()), sum(executed.values()), sum(matched.values()),
                      tuple(sorted((executed - matched).elements())), tuple(sorted((planned - matched).elements())))
