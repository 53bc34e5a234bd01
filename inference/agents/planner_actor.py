"""Planner–actor: a planner keeps a sub-goal graph with progress; an actor does one sub-goal at a time and reports.

```
plan = planner(task)                                      sub-goals with dependencies (a graph)
while a sub-goal is ready (its dependencies done):
    report = actor(sub-goal)                               tool calls in the executor (searching the pool for tools)
    a constraint notice arrived with a result             → re-plan (the new requirement joins the task)
    the sub-goal failed                                   → re-plan (at most max_replans times), else mark it failed
    else                                                  → mark it done with the report
answer = planner(final)                                   what was done, under every requirement received
```

A constraint notice is the state controller's `_notice` on a tool result (`utils.faults`, kind `constraint`). The
LLM planner answers in JSON (`prompts/planner_actor_plan.md`); a reply that is not a graph becomes one sub-goal,
the whole task. `ScriptedPlannerActorAgent` is the offline counterpart: one sub-goal per script step, re-planning a
retry of a step an injected fault failed, and adding a closing sub-goal for each constraint notice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inference.agents.base import AgentError, AgentInfrastructureError, AgentRequest, AgentRun
from inference.agents.discovery import DEFAULT_SEARCH_K, Discovery, ToolSearch, notice_of
from inference.agents.llm import PlannerModel
from inference.agents.select_execute import (
    DONE_TEXT,
    RunLog,
    ScriptStep,
    find_tool,
    injected_error,
    load_open_world_prompt,
    search_into,
    tool_loop,
    user_request,
)
from inference.tools.execution import CallRecord, ToolCallRequest, ToolExecutor, ToolInfrastructureError
from utils.llm import Prompt

PLANNER_ACTOR_NAME = "planner-actor"
SCRIPTED_PLANNER_ACTOR_NAME = "scripted-planner-actor"
DEFAULT_MAX_REPLANS = 3
DEFAULT_ACTOR_STEPS = 6
MAX_SUBGOALS = 30
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)

SubGoalStatus = Literal["pending", "done", "failed"]


@dataclass
class SubGoal:
    """One node of the plan."""

    id: str
    goal: str
    depends_on: tuple[str, ...] = ()
    status: SubGoalStatus = "pending"
    report: str = ""
    tries: int = 0
    step: ScriptStep | None = None
    """The call a scripted planner assigned to it (None for an LLM plan)."""

    def public(self) -> dict[str, Any]:
        """JSON form for traces."""
        return {"id": self.id, "goal": self.goal, "depends_on": list(self.depends_on), "status": self.status,
                "report": self.report, "tries": self.tries}


@dataclass
class PlanGraph:
    """The sub-goals of a task with their progress, and why it was re-planned."""

    subgoals: list[SubGoal] = field(default_factory=list)
    replans: list[dict[str, str]] = field(default_factory=list)
    """One entry per re-plan: `reason` (`failure` | `constraint`) and `detail`."""
    constraints: list[str] = field(default_factory=list)
    """Requirements that arrived during the work (constraint notices)."""

    def ready(self) -> SubGoal | None:
        """The first pending sub-goal whose dependencies are settled (done, or failed with no retry planned: the
        planner moves on; unknown dependencies count as settled)."""
        status = {s.id: s.status for s in self.subgoals}
        for subgoal in self.subgoals:
            if subgoal.status == "pending" and all(status.get(d, "done") != "pending" for d in subgoal.depends_on):
                return subgoal
        return None

    def replace_pending(self, subgoals: Sequence[SubGoal]) -> None:
        """Keep what is done or failed; the pending sub-goals become `subgoals` (ids kept unique)."""
        kept = [s for s in self.subgoals if s.status != "pending"]
        taken = {s.id for s in kept}
        for subgoal in subgoals:
            if subgoal.id in taken:
                subgoal.id = f"{subgoal.id}.{len(self.replans) + 1}"
            taken.add(subgoal.id)
        self.subgoals = kept + list(subgoals)[:MAX_SUBGOALS]

    def redirect(self, old: str, new: str) -> None:
        """Pending sub-goals that waited for `old` wait for `new` instead (its retry)."""
        for subgoal in self.subgoals:
            if subgoal.status == "pending" and subgoal.id != new:
                subgoal.depends_on = tuple(new if d == old else d for d in subgoal.depends_on)

    def progress_text(self) -> str:
        """The progress as the planner and the actor read it."""
        lines = [f"- [{s.status}] {s.id}: {s.goal}" + (f" — {s.report}" if s.report else "") for s in self.subgoals]
        lines += [f"- new requirement: {c}" for c in self.constraints]
        return "\n".join(lines) or "(nothing yet)"

    def public(self) -> dict[str, Any]:
        """JSON form for traces."""
        return {"subgoals": [s.public() for s in self.subgoals], "replans": list(self.replans),
                "constraints": list(self.constraints)}


def parse_plan(text: str | None, fallback: str) -> list[SubGoal]:
    """The sub-goals of a planner reply (`{"subgoals": [...]}`); one sub-goal, `fallback`, when it has none."""
    match = _JSON_OBJECT.search(text or "")
    items: list[Any] = []
    if match:
        try:
            value = json.loads(match.group(0))
        except ValueError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("subgoals"), list):
            items = value["subgoals"]
    subgoals = []
    for index, item in enumerate(items[:MAX_SUBGOALS], 1):
        if isinstance(item, dict) and str(item.get("goal") or "").strip():
            depends = item.get("depends_on")
            subgoals.append(SubGoal(str(item.get("id") or f"s{index}"), str(item["goal"]).strip(),
                                    tuple(str(d) for d in depends) if isinstance(depends, list) else ()))
    return subgoals or [SubGoal("s1", fallback)]


def _notices(records: Sequence[CallRecord]) -> list[str]:
    return [text for r in records if (text := notice_of(r.outcome.body)) is not None]


class PlannerActorAgent:
    """The LLM planner–actor (one instance per task). Planner and actor may be the same model.

    Args:
        planner: Model that plans, re-plans and writes the answer (no tools offered).
        actor: Model that executes one sub-goal with tools.
        search: The pool's search.
        max_replans: Re-plans per run (failures and constraints together).
        actor_steps: Assistant messages per sub-goal.
        max_calls: The task's call budget.
    """

    def __init__(self, planner: PlannerModel, actor: PlannerModel, search: ToolSearch, *,
                 max_replans: int = DEFAULT_MAX_REPLANS, actor_steps: int = DEFAULT_ACTOR_STEPS,
                 max_calls: int | None = None, first_k: int = DEFAULT_SEARCH_K) -> None:
        self.planner, self.actor, self.search = planner, actor, search
        self.name = f"{PLANNER_ACTOR_NAME}:{planner.name}" + ("" if actor.name == planner.name else f"+{actor.name}")
        self.max_replans, self.actor_steps, self.max_calls, self.first_k = max_replans, actor_steps, max_calls, first_k
        self.plan_prompt: Prompt = load_open_world_prompt("planner_actor_plan")
        self.actor_prompt: Prompt = load_open_world_prompt("planner_actor_actor")
        self.final_prompt: Prompt = load_open_world_prompt("planner_actor_final")
        self.discovery = Discovery()
        self.graph = PlanGraph()

    def describe(self) -> dict[str, Any]:
        """The plan with its progress and re-plans, and the searches made."""
        return {"plan": self.graph.public(), "discovery": self.discovery.public()}

    async def _plan(self, task: str, log: RunLog, change: str | None) -> list[SubGoal]:
        user = f"Task:\n{task}"
        if change is not None:
            user += f"\n\nProgress so far:\n{self.graph.progress_text()}\n\nWhat changed:\n{change}"
        messages = [{"role": "system", "content": self.plan_prompt.text}, {"role": "user", "content": user}]
        reply = await self.planner.complete(messages, [])
        log.usage.extend(reply.usage)
        log.transcript.extend([*messages, {"role": "assistant", "content": reply.text}])
        return parse_plan(reply.text, task if change is None else f"{change} (task: {task})")

    async def _replan(self, task: str, log: RunLog, reason: str, detail: str) -> bool:
        if len(self.graph.replans) >= self.max_replans:
            return False
        self.graph.replans.append({"reason": reason, "detail": detail})
        self.graph.replace_pending(await self._plan(task, log, detail))
        return True

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Plan, act sub-goal by sub-goal (re-planning on failures and constraint notices), answer.

        Raises:
            AgentInfrastructureError: A model, the search or a tool backend failed.
            AgentRequestError: The provider refused a request.
        """
        log = RunLog(self.name)
        task = user_request(request) + (f"\n\n{request.feedback.text}" if request.feedback is not None else "")
        self.graph = PlanGraph()
        try:
            if not self.discovery.searches:
                await search_into(self.discovery, self.search, tools, user_request(request), self.first_k)
            self.graph.replace_pending(await self._plan(task, log, None))
            while (subgoal := self.graph.ready()) is not None:
                if self.max_calls is not None and log.calls >= self.max_calls:
                    break
                subgoal.tries += 1
                messages: list[dict[str, Any]] = [
                    {"role": "system", "content": self.actor_prompt.text},
                    {"role": "user", "content": f"Task:\n{task}\n\nProgress:\n{self.graph.progress_text()}\n\n"
                                                f"Your sub-goal now ({subgoal.id}): {subgoal.goal}"}]
                end = await tool_loop(self.actor, messages, self.discovery, self.search, tools, log,
                                      max_steps=self.actor_steps, max_calls=self.max_calls)
                log.transcript.extend(messages)
                subgoal.report = (end.final_text or "").strip()
                failed = end.stop != "answer" or (bool(end.records) and not end.records[-1].outcome.ok)
                subgoal.status = "failed" if failed else "done"
                notices = [n for n in _notices(end.records) if n not in self.graph.constraints]
                if notices:
                    self.graph.constraints.extend(notices)
                    await self._replan(task, log, "constraint", " ".join(notices))
                elif failed:
                    await self._replan(task, log, "failure", f"sub-goal {subgoal.id} failed: {subgoal.report}")
            messages = [{"role": "system", "content": self.final_prompt.text},
                        {"role": "user", "content": f"Task:\n{task}\n\nSub-goals:\n{self.graph.progress_text()}"}]
            reply = await self.planner.complete(messages, [])
            log.usage.extend(reply.usage)
            log.transcript.extend([*messages, {"role": "assistant", "content": reply.text}])
        except AgentError as exc:
            exc.partial = log.run(None, "max_steps")
            raise
        log.add_step(reply.text, ())
        return log.run(reply.text, "answer")


class ScriptedPlannerActorAgent:
    """Offline planner–actor: the plan is the script, one sub-goal per call, each depending on the one before.

    The actor finds each step's tool by search (as `ScriptedSelectExecuteAgent` does) and makes the call. A call an
    injected fault failed makes the planner re-plan a retry of that step; a constraint notice makes it re-plan a
    closing sub-goal that answers the new requirement (the answer lists every change made). At most `max_replans`.

    Args:
        script: The calls (a task's reference), in order.
        search: The pool's search.
        max_replans: Re-plans per run.
        max_calls: The task's call budget.
    """

    name = SCRIPTED_PLANNER_ACTOR_NAME

    def __init__(self, script: Sequence[ScriptStep], search: ToolSearch, *, max_replans: int = DEFAULT_MAX_REPLANS,
                 max_calls: int | None = None) -> None:
        self.script, self.search = tuple(script), search
        self.max_replans, self.max_calls = max_replans, max_calls
        self.discovery = Discovery()
        self.graph = PlanGraph()

    def describe(self) -> dict[str, Any]:
        """The plan with its progress and re-plans, and the searches made."""
        return {"plan": self.graph.public(), "discovery": self.discovery.public()}

    def _initial_plan(self) -> list[SubGoal]:
        return [SubGoal(f"s{i + 1}", f"call {step.toolkit}/{step.tool}", (f"s{i}",) if i else (), step=step)
                for i, step in enumerate(self.script)]

    def _replan(self, reason: str, detail: str, *, before: Sequence[SubGoal] = (),
                after: Sequence[SubGoal] = ()) -> bool:
        if len(self.graph.replans) >= self.max_replans:
            return False
        self.graph.replans.append({"reason": reason, "detail": detail})
        pending = [s for s in self.graph.subgoals if s.status == "pending"]
        self.graph.replace_pending([*before, *pending, *after])
        return True

    def _answer(self, records: Sequence[CallRecord]) -> str:
        if not self.graph.constraints:
            return DONE_TEXT
        changes = [f"{r.name}({json.dumps(r.arguments, sort_keys=True)})" for r in records
                   if r.outcome.ok and r.tool is not None and r.tool.access == "write"]
        return (f"{DONE_TEXT} Changes made: {'; '.join(changes) or 'none'}. "
                f"Requirements received: {' '.join(self.graph.constraints)}")

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Plan, act step by step (re-planning on injected failures and constraint notices), answer.

        Raises:
            AgentInfrastructureError: The search or a tool backend failed.
        """
        log = RunLog(self.name)
        self.graph = PlanGraph(self._initial_plan())
        records: list[CallRecord] = []
        try:
            if not self.discovery.searches:
                await search_into(self.discovery, self.search, tools, user_request(request))
            while (subgoal := self.graph.ready()) is not None:
                if self.max_calls is not None and log.calls >= self.max_calls:
                    break
                subgoal.tries += 1
                step = subgoal.step
                if step is None:  # a closing sub-goal: answer the requirements received
                    subgoal.status, subgoal.report = "done", "the answer lists the changes made"
                    continue
                name = await find_tool(self.discovery, self.search, tools, step)
                if name is None:
                    subgoal.status, subgoal.report = "failed", "no search found its tool"
                    continue
                call = ToolCallRequest(f"scripted_{subgoal.id}", name, dict(step.arguments))
                record = await tools.execute(call, len(log.steps))
                log.add_step(None, (record,))
                records.append(record)
                subgoal.status = "done" if record.outcome.ok else "failed"
                subgoal.report = f"status {record.outcome.status}"
                notice = notice_of(record.outcome.body)
                if notice is not None and notice not in self.graph.constraints:
                    self.graph.constraints.append(notice)
                    closing = SubGoal(f"c{len(self.graph.constraints)}", f"answer the new requirement: {notice}")
                    self._replan("constraint", notice, after=[closing])
                if injected_error(record):
                    retry = SubGoal(f"{subgoal.id}.r{subgoal.tries}", f"retry {step.toolkit}/{step.tool}",
                                    subgoal.depends_on, step=step)
                    if self._replan("failure", f"{subgoal.id}: {record.outcome.content[:200]}", before=[retry]):
                        self.graph.redirect(subgoal.id, retry.id)
        except ToolInfrastructureError as exc:
            raise AgentInfrastructureError(f"tool backend failed: {exc}", log.run(None, "max_steps")) from exc
        except AgentError as exc:
            exc.partial = log.run(None, "max_steps")
            raise
        answer = self._answer(records)
        log.add_step(answer, ())
        return log.run(answer, "answer")
