"""One BFCL single-turn task through GATS: a Gecko session on the task's toolkit, the turn, the exported line.

```
POST /sessions {toolkits: [task id], faults?}  →  GET /toolkits/{task id}  →  gats.run_turn  →  DELETE the session
                                                                           │
                              best attempt's calls as made  →  ResultRecord (tokens, latency from our accounting)
```

Infrastructure failures (Gecko down, LLM down after retries) make the task `untested`: it gets no result
line (a resumed run retries it) and is not scored. In the fault arm of a `--faults` run the session carries the
task's policy (the simulated side: every attempt's fork meets the same faults at the same calls).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from benchmarks.bfcl.answer import export_answer
from benchmarks.bfcl.categories import is_irrelevance
from benchmarks.bfcl.export import ResultRecord
from benchmarks.bfcl.languages import call_language
from benchmarks.bfcl.loader import SingleTurnTask
from benchmarks.runner.faults import TaskFaults
from gats import GatsConfig, TurnInput, TurnResult, TurnStatus, run_turn
from inference.agents import Agent
from inference.gecko import GeckoClient, GeckoError, GeckoSandbox, fetch_catalog
from inference.tools.robustness import robustness_of
from utils.llm import Prompt
from utils.roles import PLANNER

PLANNER_ROLE = PLANNER.name


@dataclass(frozen=True)
class SingleTaskOutcome:
    """What one single-turn task produced."""

    task_id: str
    status: TurnStatus
    record: ResultRecord | None
    """The result line; None when the task is untested."""
    trace: dict[str, Any]
    """JSON-able account of every attempt, for the run directory."""
    usage: tuple[dict[str, Any], ...] = ()
    """LLM usage records of every attempt (planner and Gecko's stages)."""
    robustness: dict[str, Any] | None = None
    """Robustness counts per side (`inference.tools.robustness.robustness_of`): each attempt is an episode."""


def user_text(task: SingleTurnTask) -> str:
    """The user's request (the turn's user messages joined), for the checklist and the judge."""
    return "\n".join(m.content for m in task.messages if m.role == "user")


def _planner_tokens(result: TurnResult) -> tuple[int, int]:
    records = [r for r in result.usage if r.get("role") == PLANNER_ROLE]
    return sum(int(r.get("input_tokens") or 0) for r in records), sum(int(r.get("output_tokens") or 0) for r in records)


def attempt_trace(result: TurnResult) -> list[dict[str, Any]]:
    """Per attempt: status, verdict, calls with results, answer, feedback given, usage per role, latency."""
    out = []
    for attempt in result.attempts:
        verdict = attempt.verdict
        out.append({
            "index": attempt.index, "status": attempt.status, "error": attempt.error,
            "score": attempt.score, "validation_errors": attempt.validation_errors,
            "verdict": None if verdict is None else {"success": verdict.success, "score": verdict.score,
                                                      "remaining": list(verdict.remaining), "engine": verdict.engine},
            "calls": [call.public() for call in attempt.calls],
            "final_text": attempt.final_text,
            "feedback": attempt.feedback.text if attempt.feedback is not None else None,
            "usage_by_role": attempt.usage_by_role(),
            "latency_s": {"fork": round(attempt.latency.fork_s, 6), "agent": round(attempt.latency.agent_s, 6),
                          "judge": round(attempt.latency.judge_s, 6), "total": round(attempt.latency.total_s, 6)},
        })
    return out


async def run_single_task(
    task: SingleTurnTask,
    agent: Agent,
    client: GeckoClient,
    config: GatsConfig,
    *,
    labels: dict[str, str] | None = None,
    feedback_prompt: Prompt | None = None,
    faults: TaskFaults | None = None,
) -> SingleTaskOutcome:
    """Run one task through GATS and build its result line.

    Args:
        task: The task.
        agent: Its agent (a fresh one per task for scripted agents).
        client: The shared Gecko client.
        config: Retries and judging.
        labels: Session labels (run id …), shown in Gecko's listings.
        feedback_prompt: Override of the retry feedback template.
        faults: The task's fault policies (the fault arm of a `--faults` run; only the simulated side applies).
    """
    started = time.perf_counter()
    trace: dict[str, Any] = {"id": task.id, "agent": agent.name}
    try:
        base = await client.create_session({"toolkits": [task.id], "labels": {**(labels or {}), "task": task.id},
                                            **(faults or TaskFaults()).session_config()})
    except GeckoError as exc:
        trace.update(status="untested", error=f"Gecko: session: {exc}", latency_s=time.perf_counter() - started)
        return SingleTaskOutcome(task.id, "untested", None, trace)
    try:
        catalog = await fetch_catalog(client, [task.id])
        turn = TurnInput(task=user_text(task), messages=tuple({"role": m.role, "content": m.content}
                                                               for m in task.messages),
                         base_session_id=base.session_id, expects_tool_call=not is_irrelevance(task.category))
        result = await run_turn(turn, agent, GeckoSandbox(client), catalog, config, feedback_prompt=feedback_prompt)
    except GeckoError as exc:
        trace.update(status="untested", error=f"Gecko: toolkit: {exc}", latency_s=time.perf_counter() - started)
        return SingleTaskOutcome(task.id, "untested", None, trace)
    finally:
        if not config.keep_sessions:
            await GeckoSandbox(client).delete(base.session_id)
    latency = time.perf_counter() - started
    describe = getattr(agent, "describe", None)
    trace.update(status=result.status, best=result.best_index, attempts=attempt_trace(result),
                 usage_by_role=result.usage_by_role(), checklist_error=result.checklist_error,
                 latency_s=round(latency, 6), agent_info=describe() if callable(describe) else None)
    best = result.best
    robustness = robustness_of({"simulated": [attempt.calls for attempt in result.attempts]})
    if best is None:
        trace["error"] = result.failure
        return SingleTaskOutcome(task.id, "untested", None, trace, result.usage, robustness)
    input_tokens, output_tokens = _planner_tokens(result)
    answer = export_answer(best.calls, task.functions, call_language(task.category))
    record = ResultRecord(id=task.id, result=answer, input_token_count=input_tokens,
                          output_token_count=output_tokens, latency=round(latency, 6),
                          gats={"status": result.status, "attempts": len(result.attempts), "best": best.index})
    return SingleTaskOutcome(task.id, result.status, record, trace, result.usage, robustness)
