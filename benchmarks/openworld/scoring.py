"""Scoring an open-world trajectory: each constraint's machine check on the agent's calls, whether the reference's
toolkits were found, and the roll-up of a run's records (`openworld.json`).

The checks are the task engine's own (`benchmarks.openworld.tasks.constraints.constraint_holds`, the kinds and
keys of `TaskConstraint.check`), run on the agent's calls instead of the reference: a `budget` counts every call the
attempt made, failed ones included; the other kinds (`order`, `format`, `preference`, `deadline`) read only the calls
that succeeded. A constraint with an empty `check` is left to the judge (`None`, not counted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.openworld.tasks.constraints import constraint_holds
from benchmarks.openworld.tasks.model import OpenWorldTask, ReferenceCall, TaskConstraint


@dataclass(frozen=True)
class CallFact:
    """One call of a trajectory, as the checks read it."""

    toolkit: str | None
    tool: str
    """The operationId (or the agent's name for a tool that is not in the catalog)."""
    arguments: Mapping[str, Any] | None
    ok: bool

    @classmethod
    def from_public(cls, call: Mapping[str, Any]) -> CallFact:
        """From a call's trace form (`CallRecord.public()` with `operation_id`)."""
        return cls(call.get("toolkit"), str(call.get("operation_id") or call.get("agent_name") or ""),
                   call.get("arguments"), bool(call.get("ok")))

    def reference(self) -> ReferenceCall:
        """As a `ReferenceCall` (what the checks read)."""
        return ReferenceCall(toolkit=self.toolkit or "", tool=self.tool, arguments=dict(self.arguments or {}))


def check_constraint(constraint: TaskConstraint, calls: Sequence[CallFact]) -> bool | None:
    """Whether the trajectory meets the constraint; None when only the judge can tell (or its check is malformed)."""
    kept = calls if constraint.kind == "budget" else [c for c in calls if c.ok and c.toolkit]
    try:
        return constraint_holds(constraint, [c.reference() for c in kept])
    except (KeyError, TypeError, ValueError):
        return None


def constraint_results(task: OpenWorldTask, calls: Sequence[CallFact]) -> list[dict[str, Any]]:
    """Each constraint with its verdict (`passed`: True, False, or None for judge-only)."""
    return [{"id": c.id, "kind": c.kind, "passed": check_constraint(c, calls)} for c in task.constraints]


def toolkits_found(task: OpenWorldTask, found: Sequence[str]) -> float:
    """The share of the reference's toolkits among the toolkits the agent's searches found."""
    wanted = set(task.toolkits)
    return len(wanted & set(found)) / len(wanted) if wanted else 1.0


def summarize(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per group and overall: tasks, success rate, mean judge score, constraint pass rate, toolkit recall, calls."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(str(record.get("group")), []).append(record)

    def block(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
        checked = [c["passed"] for r in rows for c in r.get("constraints", []) if c["passed"] is not None]
        n = len(rows)
        return {"tasks": n,
                "success": round(sum(bool(r.get("success")) for r in rows) / n, 4) if n else None,
                "judge_score": round(sum(float(r.get("judge_score") or 0) for r in rows) / n, 4) if n else None,
                "constraints_checked": len(checked),
                "constraints_passed": round(sum(checked) / len(checked), 4) if checked else None,
                "toolkits_found": round(sum(float(r.get("toolkits_found") or 0) for r in rows) / n, 4) if n else None,
                "mean_calls": round(sum(int(r.get("calls") or 0) for r in rows) / n, 2) if n else None,
                "replans": sum(int(r.get("replans") or 0) for r in rows)}

    return {"overall": block(list(records)), "groups": {g: block(rows) for g, rows in sorted(groups.items())}}
