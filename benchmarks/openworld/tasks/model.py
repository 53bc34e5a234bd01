"""The open-world task-set format: `tasks.jsonl` (one `OpenWorldTask` per line) beside `taskset.json`
(a `TaskSetManifest`: how the set was made, what was kept and why the rest was dropped).

A task names the pool toolkits its reference solution uses, but an agent is not handed them: it finds its tools
by searching the pool (`GET /tools/search`). The reference solution was run in Gecko before the task was kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TASKS_FILE = "tasks.jsonl"
MANIFEST_FILE = "taskset.json"
ConstraintKind = Literal["order", "format", "budget", "preference", "deadline"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskConstraint(_Strict):
    """A requirement stated in the instruction, with what a checker needs to test it on a trajectory."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    kind: ConstraintKind
    text: str = Field(min_length=1, max_length=2000)
    """The requirement as the user states it (also in `instruction`)."""
    check: dict[str, Any] = Field(default_factory=dict)
    """Machine-checkable form, by kind: `order` {"before": tool, "after": tool}; `budget` {"max_calls": n};
    `format` {"tool": t, "argument": a, "pattern": regex}; `preference` {"tool": t, "argument": a, "value": v};
    `deadline` {"tool": t, "argument": a, "not_after": iso date}. Empty when only the judge can check it."""


class ReferenceCall(_Strict):
    """One call of the reference solution, in order."""

    toolkit: str
    tool: str
    """The tool's operationId in its toolkit."""
    arguments: dict[str, Any] = Field(default_factory=dict)


class OpenWorldTask(_Strict):
    """One task of a set."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
    instruction: str = Field(min_length=1)
    """What the user asks, constraints included, in words."""
    apps: tuple[str, ...] = Field(min_length=1)
    toolkits: tuple[str, ...] = Field(min_length=1)
    """The pool toolkits the reference solution calls (for scoring and reports; not shown to the agent)."""
    constraints: tuple[TaskConstraint, ...] = ()
    checklist: tuple[str, ...] = Field(min_length=1)
    """What must be true at the end, one item each (the judge's checklist)."""
    reference: tuple[ReferenceCall, ...] = Field(min_length=1)
    initial_state: dict[str, Any] | None = None
    """The Gecko session's state before the first call (None: the toolkits' default state)."""
    max_calls: int = Field(default=60, ge=1, le=1000)
    """The agent's call budget for the task."""
    origin: dict[str, Any] = Field(default_factory=dict)
    """How the task was made: engine (`template` | `llm`), seed, model, template name."""


class TaskSetManifest(_Strict):
    """`taskset.json`."""

    version: Literal[1] = 1
    pool: str
    """The pool directory the tasks were made from (its `manifest.json` pins the tools)."""
    engine: str
    seed: int | None = None
    model: str | None = None
    generated: int
    kept: int
    dropped: dict[str, int] = Field(default_factory=dict)
    """Why candidates were dropped (e.g. `reference_failed`, `trivial`, `duplicate`) → how many."""
    seconds: float | None = None


def write_tasks(path: Path, tasks: Iterable[OpenWorldTask]) -> int:
    """Write `tasks` as JSONL to `path` (replaced atomically); return how many."""
    tmp = path.with_name(path.name + ".tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as out:
        for task in tasks:
            out.write(task.model_dump_json(exclude_defaults=False) + "\n")
            count += 1
    tmp.replace(path)
    return count


def read_tasks(path: Path) -> Iterator[OpenWorldTask]:
    """The tasks of a JSONL file (a task-set directory: its `tasks.jsonl`); a bad line raises ValueError naming it."""
    if path.is_dir():
        path = path / TASKS_FILE
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield OpenWorldTask.model_validate(json.loads(line))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not an open-world task: {exc}") from None
