"""What a source of real behaviour gives the harness, and what one trajectory is.

```
FidelitySource      one real system (BFCL's tool classes, a tau2 domain): its tasks, its toolkits, warm_up(), and per task
  .tasks()            the task ids
  .gold(task)         the task's correct calls (ground truth, gold actions)
  .open(task)         a RealSystem at the task's initial state
  .official(task, real, calls, outcomes)  the official grader's verdict on the calls as executed (None: not graded)
  .task_text(task)    what the judge is told the task is; .agent_response(task): the agent's last words
RealSystem          the real tools of one run: call(name, arguments) → RealOutcome; state() in Gecko's
                    representation (the source's mapping); roots(): the top-level state keys both represent
Trajectory          a source, a task, a kind (gold | perturbed | noisy) and its planned calls
```

Sources live with their benchmark (`benchmarks/bfcl/fidelity.py`, `benchmarks/taubench/fidelity.py`); the
harness knows them by name through `sources.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

TrajectoryKind = Literal["gold", "perturbed", "noisy"]
TRAJECTORY_KINDS: tuple[TrajectoryKind, ...] = ("gold", "perturbed", "noisy")
NO_ERROR = "none"
"""Error kind of an unperturbed call the real tool accepted."""
STATE_ERROR = "state"
"""Error kind of an unperturbed call the real tool rejected (its arguments fit the schema; the state did not)."""


@dataclass(frozen=True)
class PlannedCall:
    """One call of a trajectory, by the tool's own (original) name."""

    name: str
    arguments: Mapping[str, Any]
    turn: int = 0
    """The user turn it belongs to (BFCL multi-turn; 0 elsewhere)."""
    perturbation: str | None = None
    """The injected error kind (`wrong_type`, `missing_required`, …, `dropped_call` on the call after a dropped
    one), or None for a call as the gold trajectory has it."""
    toolkit: str | None = None
    """Gecko toolkit of the tool; for a misspelled name, the toolkit of the tool it misspells."""
    operation_id: str | None = None
    """Gecko operationId (the misspelled name for a misspelled tool)."""

    def public(self) -> dict[str, Any]:
        """JSON form (traces)."""
        return {"name": self.name, "arguments": dict(self.arguments), "turn": self.turn,
                "perturbation": self.perturbation}


@dataclass(frozen=True)
class Trajectory:
    """The calls run on both sides, in order."""

    source: str
    task_id: str
    kind: TrajectoryKind
    calls: tuple[PlannedCall, ...]
    toolkits: tuple[str, ...]
    """Gecko toolkits the session enables."""
    notes: tuple[str, ...] = ()
    """What was perturbed, for the trace."""

    @property
    def key(self) -> str:
        """`<source>/<task>/<kind>`: the work item's key."""
        return trajectory_key(self.source, self.task_id, self.kind)


def trajectory_key(source: str, task_id: str, kind: str) -> str:
    """The key of a trajectory (and of its work item)."""
    return f"{source}/{task_id}/{kind}"


@dataclass(frozen=True)
class RealOutcome:
    """What a real tool returned."""

    output: Any
    """The result as JSON data when it is JSON text, else the text."""
    error: bool
    """The tool raised, or returned an error (`{"error": …}`, `Error: …`)."""
    text: str = ""
    """The result exactly as the real system renders it (for the official grader)."""


class RealSystem(Protocol):
    """The real tools of one trajectory, at the task's initial state."""

    def call(self, name: str, arguments: Mapping[str, Any]) -> RealOutcome:
        """Run one call (unknown names are errors, never exceptions)."""
        ...

    def state(self) -> dict[str, Any]:
        """The current real state in Gecko's representation (the source's mapping), as JSON data."""
        ...

    def roots(self) -> tuple[str, ...]:
        """The top-level keys of `state()` (Gecko toolkit names): the part of Gecko's state that is compared."""
        ...


class FidelitySource(Protocol):
    """One real system the harness compares Gecko with."""

    name: str
    """`bfcl`, `tau2-airline`, …: the group of its work items."""

    def warm_up(self) -> None:
        """Load what every trajectory needs (called once, before the first trajectory)."""
        ...

    def toolkits(self) -> tuple[str, ...]:
        """Every Gecko toolkit the source's tasks use."""
        ...

    def schemas_dirs(self) -> tuple[Any, ...]:
        """Directories of those toolkits (for `--gecko-url auto`)."""
        ...

    def tasks(self) -> Sequence[str]:
        """Task ids, in order."""
        ...

    def gold(self, task_id: str) -> list[PlannedCall]:
        """The task's correct calls (`toolkit` and `operation_id` may be left None: the harness fills them)."""
        ...

    def task_toolkits(self, task_id: str) -> tuple[str, ...]:
        """The toolkits one task's session enables."""
        ...

    def open(self, task_id: str) -> RealSystem:
        """Fresh real tools at the task's initial state."""
        ...

    def official(self, task_id: str, real: RealSystem, calls: Sequence[PlannedCall],
                 outcomes: Sequence[RealOutcome]) -> bool | None:
        """The official grader's verdict on the trajectory as `real` (from `open`) executed it (None: not graded)."""
        ...

    def task_text(self, task_id: str) -> str:
        """The task as the judge is told it (the user's words)."""
        ...

    def agent_response(self, task_id: str) -> str:
        """The agent's final answer the judge sees ("" if none)."""
        ...
