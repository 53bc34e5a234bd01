"""tau2-bench airline and retail tasks as RL episodes (`inference.env`): a ready-made suite of 164 episodes.

Each task becomes an `EpisodeSpec`: the customer's opening request (reason for the call and what they know) is
the task, the domain's policy is the system prompt, the toolkit is the domain's mock toolkit
(`benchmarks/taubench/toolkits/`, which Gecko must serve), the checklist is the task's natural-language
assertions (none: Gecko writes one from the task), and `max_steps` leaves room for the gold actions.
`oracle_actions` gives the gold actions as steps, then the oracle's closing answer.

The initial state is the part of the domain database the task touches, under the domain's name: the records
whose keys the scenario or the gold calls name (users, reservations, orders, flights, products), and the
records those records name in turn (a user's reservations, a reservation's flights, an order's products).
Departures from tau2: the whole database (3.3 MB for airline) exceeds Gecko's request size limit, so records no
path from the task reaches (other customers, flights nobody named) are left out; and there is no user
simulator — the episode is the opening request, answered by the agent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.loader import DEFAULT_TASK_SET, DataStore
from benchmarks.taubench.scripted import opening_request, oracle_closing
from benchmarks.taubench.tasks import Task
from inference.env import EpisodeSpec

DOMAINS = ("airline", "retail")
STEP_MARGIN = 8
"""Steps an episode allows beyond its gold actions and closing answer."""
_TOKEN = re.compile(r"[#\w]+")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield from _TOKEN.findall(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _gold(task: Task) -> list[Any]:
    actions = (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
    return [action for action in actions if action.requestor == "assistant"]


def task_state(task: Task, db: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The records of `db` (table → key → record) the task reaches: named by its scenario or gold calls, and
    named by those records in turn."""
    owner = {key: table for table, records in db.items() for key in records}
    pending = set(_strings(task.user_scenario.model_dump())) | {s for a in _gold(task) for s in _strings(a.arguments)}
    picked: dict[str, dict[str, Any]] = {table: {} for table in db}
    while pending:
        key = pending.pop()
        table = owner.get(key)
        if table is None or key in picked[table]:
            continue
        record = db[table][key]
        picked[table][key] = record
        pending |= {s for s in _strings(record) if s in owner}
    return picked


def episode_spec(task: Task, runtime: DomainRuntime, db: Mapping[str, Mapping[str, Any]]) -> EpisodeSpec:
    """The episode of one tau2 task of `runtime`'s domain (`db`: the domain's pristine database)."""
    criteria = task.evaluation_criteria
    checklist = list(criteria.nl_assertions) if criteria and criteria.nl_assertions else None
    return EpisodeSpec(task=opening_request(task), toolkits=[runtime.name], system_prompt=runtime.policy,
                       state={runtime.name: task_state(task, db)}, checklist=checklist,
                       max_steps=len(_gold(task)) + 1 + STEP_MARGIN, id=f"{runtime.name}_{task.id}")


def tau2_tasks(domain: str, split: str = "base", store: DataStore | None = None) -> list[Task]:
    """The tasks of one domain's split (`base`: all, `train`, `test`) of the default task set."""
    return (store or DataStore()).tasks(domain, DEFAULT_TASK_SET, split=split)  # type: ignore[arg-type]


def tau2_episodes(domains: Sequence[str] = DOMAINS, split: str = "base") -> list[EpisodeSpec]:
    """Every task of `domains` (airline and retail by default) as an episode spec."""
    store = DataStore()
    specs: list[EpisodeSpec] = []
    for domain in domains:
        runtime, db = DomainRuntime(domain, store), store.db_json(domain)
        specs += [episode_spec(task, runtime, db) for task in tau2_tasks(domain, split, store)]
    return specs


def oracle_actions(task: Task) -> list[dict[str, Any]]:
    """The gold actions, one per step, then the oracle's closing answer (what the task requires be said)."""
    return [*({"tool_calls": [{"name": a.name, "arguments": dict(a.arguments)}]} for a in _gold(task)),
            {"answer": oracle_closing(task)}]
