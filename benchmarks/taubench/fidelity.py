"""tau2 airline and retail as sources of real behaviour for the fidelity harness (`benchmarks.fidelity`).

- Tasks: a domain's tasks (task set v1 by default); gold calls are the assistant's gold actions.
- Real tools: an `Environment` over a pristine DB per trajectory.
- State mapping: the DB's collections (`flights`, `users`, `reservations`; `products`, `users`, `orders`) under the
  domain name (= the mock toolkit's name), keyed as in `db.json`, each record as its JSON dump, **projected** on the
  records the trajectory can touch: those whose key occurs among the gold calls' argument values, the records
  those refer to (one more hop: a user's reservations, a reservation's flights, an order's products), and every
  record created during the run. The whole DB (7 MB for airline) would make every Gecko state version that big
  for no gain: a record nothing refers to stays the same on both sides.
- Outputs: the tool's result text, parsed as JSON when it is JSON; an error is `Error: …` (the tool's flag).
- Official grader: tau2's reward (`evaluate.evaluate`) of a conversation made of the calls and their results, a
  final agent message that says the task's required information, and a user stop. Tasks whose reward needs an
  NL-assertion judge are not graded (None).
- Judge input: the user scenario as the user simulator gets it; the agent's answer is that final message.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from benchmarks.fidelity.model import PlannedCall, RealOutcome
from benchmarks.taubench.environment import DomainRuntime, Environment, WriteCall, canonical_writes
from benchmarks.taubench.evaluate import evaluate
from benchmarks.taubench.loader import DEFAULT_TASK_SET, DataStore
from benchmarks.taubench.messages import AssistantMessage, Message, MessageToolCall, ToolMessage, UserMessage
from benchmarks.taubench.mock_toolkits import MOCK_DIR
from benchmarks.taubench.orchestrator import STOP
from benchmarks.taubench.results import TerminationReason
from benchmarks.taubench.scripted import oracle_closing
from benchmarks.taubench.tasks import Task, TaskSet, render_user_scenario

REFERENCE_HOPS = 2
"""Records reached from the calls' arguments (1), and the records those refer to (2)."""


def parse_output(text: str) -> Any:
    """A result text as JSON data when it is JSON (objects, arrays, numbers), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _collections(db: Any) -> dict[str, dict[str, Any]]:
    return {name: getattr(db, name) for name in type(db).model_fields if isinstance(getattr(db, name), dict)}


class Tau2RealSystem:
    """One environment of a tau2 domain, with its DB projected into Gecko's representation."""

    def __init__(self, environment: Environment, domain: str, seeds: Iterable[str]) -> None:
        self._env = environment
        self._domain = domain
        collections = _collections(environment.db)
        self._initial_keys = {name: set(records) for name, records in collections.items()}
        selected: dict[str, set[str]] = {name: set() for name in collections}
        frontier = set(seeds)
        for _ in range(REFERENCE_HOPS):
            found: set[str] = set()
            for name, records in collections.items():
                for key in frontier & self._initial_keys[name] - selected[name]:
                    selected[name].add(key)
                    found.update(_strings(records[key].model_dump(mode="json")))
            frontier = found
        self._selected = selected

    def call(self, name: str, arguments: Mapping[str, Any]) -> RealOutcome:
        """Run one agent tool call on the live DB (unknown tools are error results)."""
        outcome = self._env.execute(name, dict(arguments))
        return RealOutcome(parse_output(outcome.content), outcome.error, outcome.content)

    def state(self) -> dict[str, Any]:
        """`{domain: {collection: {key: record}}}` for the projected and the newly created records."""
        out: dict[str, Any] = {}
        for name, records in _collections(self._env.db).items():
            keys = self._selected[name] | (records.keys() - self._initial_keys[name])
            out[name] = {key: records[key].model_dump(mode="json") for key in sorted(keys) if key in records}
        return {self._domain: out}

    def roots(self) -> tuple[str, ...]:
        """The domain name (= the mock toolkit's name)."""
        return (self._domain,)

    @property
    def environment(self) -> Environment:
        """The live environment."""
        return self._env


class Tau2FidelitySource:
    """A tau2 domain's tools and DB as the harness's real system.

    Args:
        domain: `airline` or `retail`.
        task_set: `v1` (default) or `v0`.
        store: the data store (shared between domains).
    """

    def __init__(self, domain: str, task_set: TaskSet = DEFAULT_TASK_SET, store: DataStore | None = None) -> None:
        self.domain = domain
        self.name = f"tau2-{domain}"
        self.runtime = DomainRuntime(domain, store or DataStore(), task_set)

    @cached_property
    def _tasks(self) -> dict[str, Task]:
        return {task.id: task for task in self.runtime.store.tasks(self.domain, self.runtime.task_set)}

    def warm_up(self) -> None:
        """Parse the domain's DB once (every trajectory validates a fresh DB from it)."""
        self.runtime.store.db_json(self.domain)

    def toolkits(self) -> tuple[str, ...]:
        """The domain's mock toolkit."""
        return (self.domain,)

    def schemas_dirs(self) -> tuple[Path, ...]:
        """`benchmarks/taubench/toolkits`."""
        return (MOCK_DIR,)

    def tasks(self) -> list[str]:
        """Task ids, in file order."""
        return list(self._tasks)

    def task_toolkits(self, task_id: str) -> tuple[str, ...]:
        """The domain's mock toolkit."""
        return (self.domain,)

    def _actions(self, task_id: str) -> list[PlannedCall]:
        criteria = self._tasks[task_id].evaluation_criteria
        return [PlannedCall(a.name, dict(a.arguments)) for a in (criteria.actions if criteria else None) or []
                if a.requestor == "assistant"]

    def gold(self, task_id: str) -> list[PlannedCall]:
        """The assistant's gold actions, in order."""
        return self._actions(task_id)

    def open(self, task_id: str) -> Tau2RealSystem:
        """A pristine environment, projected on the records the task's gold calls can reach."""
        seeds = set(_strings([dict(call.arguments) for call in self._actions(task_id)]))
        return Tau2RealSystem(self.runtime.environment(), self.domain, seeds)

    def official(self, task_id: str, real: Tau2RealSystem, calls: Sequence[PlannedCall],
                 outcomes: Sequence[RealOutcome]) -> bool | None:
        """tau2's reward of the executed calls (None when the task needs an NL judge).

        The real environment executed exactly these calls from a pristine DB, so its fingerprint is the one a
        replay would reach: it is recorded for its write sequence first, and the grader does not replay.
        """
        task = self._tasks[task_id]
        writes = real.environment.writes
        if writes and canonical_writes(writes) != canonical_writes(
                [WriteCall(c.name, dict(c.arguments)) for c in self._actions(task_id) if self.runtime.is_write(c.name)]):
            real.environment.db_hash()
        messages: list[Message] = []
        for index, (call, outcome) in enumerate(zip(calls, outcomes)):
            call_id = f"fidelity-{index}"
            messages.append(AssistantMessage(tool_calls=[MessageToolCall(id=call_id, name=call.name,
                                                                         arguments=dict(call.arguments))]))
            messages.append(ToolMessage(id=call_id, content=outcome.text, error=outcome.error))
        messages.append(AssistantMessage(content=oracle_closing(task)))
        messages.append(UserMessage(content=STOP))
        reward = evaluate(self.runtime, task, messages, TerminationReason.USER_STOP)
        return None if not reward.graded else reward.reward == 1.0

    def task_text(self, task_id: str) -> str:
        """The user scenario, as the user simulator is given it."""
        return render_user_scenario(self._tasks[task_id].user_scenario)

    def agent_response(self, task_id: str) -> str:
        """The final agent message of the trajectory (it says the task's required information)."""
        return oracle_closing(self._tasks[task_id])
