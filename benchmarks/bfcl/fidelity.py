"""BFCL multi-turn as a source of real behaviour for the fidelity harness (`benchmarks.fidelity`).

- Tasks: a multi-turn category's entries (default `multi_turn_base`); gold calls are the ground truth with
  positional arguments named from the docs (`oracle.multi_turn_oracle_calls`), each tagged with its turn.
- Real tools: `BfclRealTools`, fresh instances per trajectory loaded from the entry's initial config.
- State mapping: `state_map.instance_state` of every involved class, under the class name (= its Gecko
  toolkit name); those class names are the compared roots.
- Outputs: the rendered result text, parsed as JSON when it is JSON; errors as `BfclRealTools` reports them
  (an exception, or a dict with an `error` key).
- Official grader: the official multi-turn checker (`checker.check_multi_turn`) on the calls grouped by turn
  (calls to names outside the entry's docs are dropped, as our scoring does).
- Judge input: the user turns, joined; the agent's answer is empty (BFCL grades state and results only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from benchmarks.bfcl.checker import check_multi_turn
from benchmarks.bfcl.loader import MultiTurnTask, load_category
from benchmarks.bfcl.oracle import multi_turn_oracle_calls
from benchmarks.bfcl.parse import FunctionCall
from benchmarks.bfcl.real_tools import BFCL_CLASSES, BfclRealTools
from benchmarks.bfcl.runtime import OPENAPI_DIR, real_tools
from benchmarks.bfcl.state_map import instance_state
from benchmarks.fidelity.model import PlannedCall, RealOutcome
from inference.tools import RealCall

DEFAULT_CATEGORY = "multi_turn_base"


def parse_output(text: str) -> Any:
    """A result text as JSON data when it is a JSON object or array, else the text itself."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            return text
    return text


class BfclRealSystem:
    """The real tool instances of one BFCL trajectory, with their state in Gecko's representation."""

    def __init__(self, task: MultiTurnTask) -> None:
        self._tools: BfclRealTools = real_tools(task)
        self._roots = tuple(task.involved_classes)

    def call(self, name: str, arguments: Mapping[str, Any]) -> RealOutcome:
        """Run one call by method name (an unknown name is an error result)."""
        result = self._tools.execute(RealCall(name, dict(arguments)))
        return RealOutcome(parse_output(result.content), result.error, result.content)

    def state(self) -> dict[str, Any]:
        """`{ClassName: instance_state}` of every involved class."""
        return {name: instance_state(instance) for name, instance in self._tools.instances.items()}

    def roots(self) -> tuple[str, ...]:
        """The involved class names (= Gecko toolkit names)."""
        return self._roots


class BfclFidelitySource:
    """The BFCL multi-turn tool classes as the harness's real system.

    Args:
        category: The multi-turn category whose entries are the tasks.
    """

    def __init__(self, category: str = DEFAULT_CATEGORY) -> None:
        if not category.startswith("multi_turn"):
            raise ValueError(f"the fidelity harness runs BFCL multi-turn categories, not {category!r}")
        self.category = category
        self.name = "bfcl"

    @cached_property
    def _tasks(self) -> dict[str, MultiTurnTask]:
        return {task.id: task for task in load_category(self.category) if isinstance(task, MultiTurnTask)}

    def warm_up(self) -> None:
        """Load the category's entries."""
        self.tasks()

    def toolkits(self) -> tuple[str, ...]:
        """The eight class toolkits."""
        return BFCL_CLASSES

    def schemas_dirs(self) -> tuple[Path, ...]:
        """`data/bfcl/openapi/multi_turn`."""
        return (OPENAPI_DIR / "multi_turn",)

    def tasks(self) -> list[str]:
        """Entry ids, in data order."""
        return list(self._tasks)

    def task_toolkits(self, task_id: str) -> tuple[str, ...]:
        """The entry's involved classes."""
        return tuple(self._tasks[task_id].involved_classes)

    def gold(self, task_id: str) -> list[PlannedCall]:
        """Ground-truth calls, in order, with their turn."""
        turns = multi_turn_oracle_calls(self._tasks[task_id])
        return [PlannedCall(call.name, call.arguments, turn) for turn, calls in enumerate(turns) for call in calls]

    def open(self, task_id: str) -> BfclRealSystem:
        """Fresh instances at the entry's initial config."""
        return BfclRealSystem(self._tasks[task_id])

    def official(self, task_id: str, real: BfclRealSystem, calls: Sequence[PlannedCall],
                 outcomes: Sequence[RealOutcome]) -> bool | None:
        """The official multi-turn checker's verdict (each turn's calls as one step)."""
        task = self._tasks[task_id]
        known = {doc["name"] for doc in task.functions_at_turn(len(task.turns))}
        per_turn: list[list[FunctionCall]] = [[] for _ in task.turns]
        for call in calls:
            if call.name in known and call.turn < len(per_turn):
                per_turn[call.turn].append(FunctionCall(call.name, dict(call.arguments)))
        return check_multi_turn(task, [[turn] if turn else [] for turn in per_turn]).valid

    def task_text(self, task_id: str) -> str:
        """The user's turns, one per line."""
        return "\n".join(m.content for turn in self._tasks[task_id].turns for m in turn if m.role == "user")

    def agent_response(self, task_id: str) -> str:
        """Empty: BFCL grades the state and the call results."""
        return ""
