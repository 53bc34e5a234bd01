"""One BFCL multi-turn task: a Gecko session seeded with the task's initial state, then every turn through
`gats.turns` (simulated attempts, real execution on fresh tool-class instances, sync), then the result line.

```
POST /sessions {toolkits: involved classes}  →  POST /init-session-state {initial_config, involved_classes}
  → GET /toolkits/{class}…  →  gats.run_conversation (per turn: run_turn, real run, /update-state-from-real)
  → result line: the REAL calls of each turn, one step text per agent step  →  DELETE the session
```

A task whose conversation is `untested` (Gecko or the LLM down, a failed sync) gets no result line (a resumed
run retries it) and is not scored. In the fault arm of a `--faults` run the session carries the task's simulated
policy and the real tool classes sit behind a `FaultyBackend` with its real policy (no state view: rules with a
state condition do not match real calls here, and an `external_change` is recorded as not applied).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal

from benchmarks.bfcl.answer import export_answer
from benchmarks.bfcl.export import ResultRecord
from benchmarks.bfcl.loader import MultiTurnTask, WebSearchTask
from benchmarks.bfcl.runtime import real_tools
from benchmarks.bfcl.single_turn import PLANNER_ROLE, attempt_trace
from benchmarks.bfcl.web_search import agentic_result
from benchmarks.runner.faults import TaskFaults
from gats import GatsConfig
from gats.turns import (
    ConversationResult,
    ConversationTurn,
    GeckoStateSync,
    RealTurnResult,
    RealTurnSetup,
    StateSync,
    TurnAgents,
    run_conversation,
)
from inference.gecko import GeckoClient, GeckoError, GeckoSandbox, fetch_catalog
from inference.tools import CallRecord, FaultyBackend, RealToolsBackend, ToolBackend, ToolCatalog
from inference.tools.robustness import robustness_of

TaskStatus = Literal["completed", "untested"]


@dataclass(frozen=True)
class MultiTaskOutcome:
    """What one multi-turn task produced."""

    task_id: str
    status: TaskStatus
    record: ResultRecord | None
    """The result line; None when the task is untested."""
    trace: dict[str, Any]
    """JSON-able account of every turn (simulated attempts, plan, real calls, divergence, sync)."""
    gecko_session: str | None = None
    usage: tuple[dict[str, Any], ...] = ()
    """LLM usage records of every turn (simulated attempts and real runs)."""
    robustness: dict[str, Any] | None = None
    """Robustness counts per side (`robustness_of`): each simulated attempt and each real turn is an episode."""


def conversation_turns(task: MultiTurnTask, catalog: ToolCatalog) -> list[ConversationTurn]:
    """The task's user turns; each offers the tools whose docs are released by then (miss_func)."""
    turns = []
    for index, messages in enumerate(task.turns):
        allowed = {doc["name"] for doc in task.functions_at_turn(index)}
        offered = ToolCatalog(spec for spec in catalog.specs if spec.original_name in allowed)
        text = "\n".join(m.content for m in messages if m.role == "user")
        turns.append(ConversationTurn(text, tuple({"role": m.role, "content": m.content} for m in messages),
                                      offered))
    return turns


def export_turns(turns: tuple[RealTurnResult, ...]) -> list[list[Any]]:
    """The `result` of a multi-turn line: per turn, one entry per real agent step that made calls. A call an
    injected fault answered instead of the tool (fault arm) did not happen and is left out: the official checker
    replays the result, so it scores what the agent really achieved."""
    out: list[list[Any]] = []
    for turn in turns:
        steps: dict[int, list[CallRecord]] = defaultdict(list)
        for call in turn.real_calls:
            if not call.outcome.blocked_by_fault:
                steps[call.step].append(call)
        out.append([export_answer(calls) for _, calls in sorted(steps.items())])
    return out


def _planner_tokens(turn: RealTurnResult) -> tuple[int, int]:
    records = [r for r in turn.simulated.usage if r.get("role") == PLANNER_ROLE]
    records += [r for r in (turn.real.usage if turn.real else ()) if r.get("role") == PLANNER_ROLE]
    return sum(int(r.get("input_tokens") or 0) for r in records), sum(int(r.get("output_tokens") or 0) for r in records)


def turn_trace(turn: RealTurnResult) -> dict[str, Any]:
    """Simulated and real traces of one turn, kept apart."""
    plan = turn.plan
    return {
        "index": turn.index, "status": turn.status, "error": turn.error, "latency_s": round(turn.latency_s, 6),
        "simulated": {"status": turn.simulated.status, "best": turn.simulated.best_index,
                      "checklist": [o.description for o in turn.simulated.checklist or ()],
                      "checklist_error": turn.simulated.checklist_error,
                      "attempts": attempt_trace(turn.simulated)},
        "plan": None if plan is None else {"attempt": plan.attempt, "status": plan.status, "steps": [
            {"name": s.name, "arguments": dict(s.arguments), "provenance": dict(s.provenance)} for s in plan.steps]},
        "real": None if turn.real is None else {"agent": turn.real.agent, "final_text": turn.real.final_text,
                                                "calls": [c.public() for c in turn.real.calls]},
        "divergence": turn.divergence.public() if turn.divergence else None,
        "state_version": turn.state_version,
    }


def _record(task: MultiTurnTask, result: ConversationResult, latency: float) -> ResultRecord:
    tokens = [_planner_tokens(turn) for turn in result.turns]
    steps = export_turns(result.turns)
    if isinstance(task, WebSearchTask):  # agentic: the final answer is the step the official checker reads
        real = result.turns[0].real if result.turns else None
        steps = agentic_result(steps, real.final_text if real else None)
    return ResultRecord(
        id=task.id, result=steps,
        input_token_count=[[i] for i, _ in tokens], output_token_count=[[o] for _, o in tokens],
        latency=[[round(t.latency_s, 6)] for t in result.turns],
        gats={"turns": [{"status": t.status, "attempts": len(t.simulated.attempts), "best": t.simulated.best_index,
                         "diverged": bool(t.divergence and t.divergence.diverged)} for t in result.turns],
              "total_latency": round(latency, 6)})


async def run_multi_task(
    task: MultiTurnTask, agents: TurnAgents, client: GeckoClient, config: GatsConfig, *,
    labels: dict[str, str] | None = None, sync: StateSync | None = None, faults: TaskFaults | None = None,
) -> MultiTaskOutcome:
    """Run one task through per-turn GATS with real execution and build its result line.

    Args:
        task: The task.
        agents: Its per-turn agents.
        client: The shared Gecko client.
        config: Retries, judging, checklist.
        labels: Session labels (run id …).
        sync: Where real results go (default: Gecko's `/update-state-from-real`); tests inject failures here.
        faults: The task's fault policies (the fault arm of a `--faults` run): the Gecko session's (every attempt's
            fork inherits it) and the real tool classes' (`FaultyBackend`).
    """
    faults = faults or TaskFaults()
    started = time.perf_counter()
    trace: dict[str, Any] = {"id": task.id, "category": task.category}
    classes = list(task.involved_classes)
    try:
        session = await client.create_session({"toolkits": classes, "labels": {**(labels or {}), "task": task.id},
                                               **faults.session_config()})
    except GeckoError as exc:
        trace.update(status="untested", error=f"Gecko: session: {exc}", latency_s=round(time.perf_counter() - started, 6))
        return MultiTaskOutcome(task.id, "untested", None, trace)
    sandbox = GeckoSandbox(client)
    trace["session"] = session.session_id
    try:
        await client.init_session_state(session.session_id, dict(task.initial_config), classes)
        catalog = await fetch_catalog(client, classes)
        real_backend: ToolBackend = RealToolsBackend(real_tools(task))
        if faults.real is not None:
            real_backend = FaultyBackend(real_backend, faults.real, side="real")
        setup = RealTurnSetup(agents=agents, sandbox=sandbox, catalog=catalog,
                              real_backend=real_backend, sync=sync or GeckoStateSync(client),
                              config=config, context=(json.dumps(dict(task.initial_config), default=str),))
        result = await run_conversation(conversation_turns(task, catalog), session.session_id, setup)
    except GeckoError as exc:
        trace.update(status="untested", error=f"Gecko: seeding: {exc}", latency_s=round(time.perf_counter() - started, 6))
        return MultiTaskOutcome(task.id, "untested", None, trace, session.session_id)
    finally:
        if not config.keep_sessions:
            await sandbox.delete(session.session_id)
    latency = time.perf_counter() - started
    trace.update(status=result.status, error=result.error, latency_s=round(latency, 6),
                 turns=[turn_trace(t) for t in result.turns])
    usage = tuple(record for turn in result.turns
                  for record in (*turn.simulated.usage, *(turn.real.usage if turn.real else ())))
    robustness = robustness_of({
        "simulated": [attempt.calls for turn in result.turns for attempt in turn.simulated.attempts],
        "real": [turn.real_calls for turn in result.turns]})
    if result.status == "untested":
        return MultiTaskOutcome(task.id, "untested", None, trace, session.session_id, usage, robustness)
    return MultiTaskOutcome(task.id, "completed", _record(task, result, latency), trace, session.session_id, usage,
                            robustness)
