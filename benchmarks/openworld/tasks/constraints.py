"""Constraints with machine-checkable forms (the `check` of `TaskConstraint`), built from a reference solution,
and `constraint_holds`, which tests one on a sequence of calls (a reference or an agent's trajectory).

Checks name a tool by its operationId (`tool`) and its toolkit (`toolkit`, added so equal operationIds of two
toolkits stay apart).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Sequence
from typing import Any

from benchmarks.openworld.tasks.model import ReferenceCall, TaskConstraint

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SHAPES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (_DATE, r"^\d{4}-\d{2}-\d{2}$", "as a date in YYYY-MM-DD form"),
    (re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$"), r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$", "as an e-mail address"),
    (re.compile(r"^[A-Z0-9]{3,12}$"), r"^[A-Z0-9]{3,12}$", "as an upper-case code"),
    (re.compile(r"^\d+$"), r"^\d+$", "as digits only"),
)
CHECK_KEYS = {"order": {"before", "after"}, "budget": {"max_calls"}, "format": {"tool", "argument", "pattern"},
              "preference": {"tool", "argument", "value"}, "deadline": {"tool", "argument", "not_after"}}
"""The keys each kind's `check` must carry (besides `toolkit`)."""


def _calls_of(calls: Sequence[ReferenceCall], toolkit: str | None, tool: str) -> list[int]:
    return [i for i, c in enumerate(calls) if c.tool == tool and (toolkit is None or c.toolkit == toolkit)]


def constraint_holds(constraint: TaskConstraint, calls: Sequence[ReferenceCall]) -> bool | None:
    """Whether `calls` satisfy the constraint (None when its `check` is empty: only a judge can tell)."""
    check = constraint.check
    if not check:
        return None
    toolkit = check.get("toolkit")
    if constraint.kind == "budget":
        return len(calls) <= int(check["max_calls"])
    if constraint.kind == "order":
        before = _calls_of(calls, check.get("before_toolkit", toolkit), check["before"])
        after = _calls_of(calls, check.get("after_toolkit", toolkit), check["after"])
        return bool(before) and bool(after) and min(before) < min(after)
    matching = [calls[i].arguments.get(check["argument"]) for i in _calls_of(calls, toolkit, check["tool"])]
    if not matching:
        return False
    if constraint.kind == "format":
        return all(isinstance(v, str) and re.search(check["pattern"], v) is not None for v in matching)
    if constraint.kind == "preference":
        return all(v == check["value"] for v in matching)
    if constraint.kind == "deadline":
        return all(isinstance(v, str) and v[:10] <= str(check["not_after"]) for v in matching)
    return None


def well_formed(constraint: TaskConstraint) -> bool:
    """Its `check` has its kind's keys, and a format pattern compiles."""
    if not constraint.check:
        return True
    if not CHECK_KEYS[constraint.kind] <= set(constraint.check):
        return False
    if constraint.kind == "format":
        try:
            re.compile(constraint.check["pattern"])
        except re.error:
            return False
    return True


def _scalar_arguments(calls: Sequence[ReferenceCall]) -> list[tuple[int, str, Any]]:
    return [(i, name, value) for i, call in enumerate(calls) for name, value in sorted(call.arguments.items())
            if isinstance(value, (str, bool, int)) and not isinstance(value, float)]


def build_constraints(calls: Sequence[ReferenceCall], rng: random.Random, order_pair: tuple[int, int] | None,
                      labels: Sequence[str], slack: int) -> list[TaskConstraint]:
    """Constraints the reference satisfies: order (the pair given), budget, and format, preference and deadline
    where an argument lends itself; `labels[i]` names call i in words."""
    out: list[TaskConstraint] = []
    if order_pair is not None:
        first, then = calls[order_pair[0]], calls[order_pair[1]]
        out.append(TaskConstraint(
            id="order", kind="order",
            text=f"First {labels[order_pair[0]]}, and only then {labels[order_pair[1]]}.",
            check={"before": first.tool, "before_toolkit": first.toolkit, "after": then.tool,
                   "after_toolkit": then.toolkit}))
    budget = len(calls) + slack
    out.append(TaskConstraint(id="budget", kind="budget", text=f"Use at most {budget} tool calls in total.",
                              check={"max_calls": budget}))
    candidates = _scalar_arguments(calls)
    rng.shuffle(candidates)
    dates = [(i, n, v) for i, n, v in candidates if isinstance(v, str) and _DATE.match(v)]
    if dates:
        i, name, value = dates[0]
        try:
            limit = (dt.date.fromisoformat(value) + dt.timedelta(days=rng.randint(0, 14))).isoformat()
        except ValueError:
            limit = None
        if limit is not None and all(_DATE.match(str(calls[j].arguments.get(name, ""))) and
                                     str(calls[j].arguments[name]) <= limit
                                     for j in _calls_of(calls, calls[i].toolkit, calls[i].tool)):
            out.append(TaskConstraint(
                id="deadline", kind="deadline", text=f"The {name} for {labels[i]} must be no later than {limit}.",
                check={"tool": calls[i].tool, "toolkit": calls[i].toolkit, "argument": name, "not_after": limit}))
    for i, name, value in candidates:
        if not isinstance(value, str):
            continue
        shape = next(((pattern, words) for regex, pattern, words in _SHAPES if regex.match(value)), None)
        if shape is None:
            continue
        constraint = TaskConstraint(
            id="format", kind="format", text=f"Give the {name} for {labels[i]} {shape[1]}.",
            check={"tool": calls[i].tool, "toolkit": calls[i].toolkit, "argument": name, "pattern": shape[0]})
        if constraint_holds(constraint, calls):
            out.append(constraint)
            break
    for i, name, value in candidates:
        if isinstance(value, bool) or (isinstance(value, str) and 0 < len(value) <= 40 and not _DATE.match(value)):
            constraint = TaskConstraint(
                id="preference", kind="preference",
                text=f"For {labels[i]}, I prefer {name} = {value!r}." if not isinstance(value, bool)
                else f"For {labels[i]}, set {name} to {str(value).lower()}.",
                check={"tool": calls[i].tool, "toolkit": calls[i].toolkit, "argument": name, "value": value})
            if constraint_holds(constraint, calls):
                out.append(constraint)
                break
    return out
