"""Algorithm 1 for one user turn: attempts 0..R in simulation, each on a fork of the turn-start session.

```
checklist (optional, once per turn: generated on the turn-start session, or fixed)
for attempt in 0..R:
    fork the turn-start session
    run the agent on the fork (validation errors come back at once, as tool results)
    judge the fork's calls and the agent's answer against the checklist (if judging is on)
    stop on success; else the next attempt gets the feedback (calls, results, what is left)
choose the best attempt (see select.py)
```

An infrastructure failure at any step (the checklist, a fork, the agent's LLM, the judge) ends the turn at once as
`untested`: the attempts GATS would have made cannot be made, so no result of the turn is the method's.

The loop knows nothing of any benchmark. Real execution of the best attempt (BFCL multi-turn, tau2) and
syncing its results back (`/update-state-from-real`) are the caller's next step: run the agent again with a
real-tool `ToolExecutor`, using `TurnResult.best` as its plan.
"""

from __future__ import annotations

import time
from typing import Any

from gats.feedback import build_feedback, load_feedback_prompt
from gats.model import (
    INFRASTRUCTURE_STATUSES,
    AttemptLatency,
    AttemptRecord,
    GatsConfig,
    Objective,
    TurnInput,
    TurnResult,
    Verdict,
)
from gats.ports import Sandbox
from gats.select import attempt_status, best_attempt, should_stop, turn_status
from inference.agents.base import Agent, AgentError, AgentRequest, AgentRun, RetryFeedback
from inference.gecko.errors import GeckoError, GeckoUnavailableError
from inference.gecko.models import JudgeReply
from inference.tools.catalog import ToolCatalog
from inference.tools.execution import ToolExecutor
from utils.llm import Prompt

ATTEMPT_LABEL = "attempt"
"""Label of an attempt's fork: its index (0 for the first)."""


def verdict_from(reply: JudgeReply) -> Verdict:
    """A `Verdict` from the judge's reply; the score is the fraction of items judged `success`."""
    items = tuple(item.model_dump() for item in reply.items)
    met = sum(item.status == "success" for item in reply.items)
    score = met / len(reply.items) if reply.items else 0.0
    return Verdict(success=reply.success and bool(reply.items), score=score, remaining=tuple(reply.remaining),
                   items=items, engine=reply.engine)


async def _objectives(
    turn: TurnInput, sandbox: Sandbox, config: GatsConfig
) -> tuple[tuple[Objective, ...] | None, str | None, bool]:
    """The turn's objectives, why there are none (if generation failed), and whether it failed because Gecko or
    its judge model was unavailable (then the turn is untested)."""
    if config.generate_checklist and turn.task.strip():
        try:
            reply = await sandbox.checklist(turn.base_session_id, turn.task, turn.previous_tasks)
        except GeckoUnavailableError as exc:
            return None, f"checklist generation failed: {exc}", True
        except GeckoError as exc:  # Gecko refused the request: the judge goes on with its default checklist
            return None, f"checklist generation refused, the judge uses its default: {exc}", False
        return tuple(Objective(i.id, i.description) for i in reply.items), None, False
    if config.fixed_checklist:
        return tuple(Objective(str(i), text) for i, text in enumerate(config.fixed_checklist, start=1)), None, False
    return None, None, False


async def run_attempt(
    index: int,
    turn: TurnInput,
    agent: Agent,
    sandbox: Sandbox,
    catalog: ToolCatalog,
    config: GatsConfig,
    feedback: RetryFeedback | None,
    objectives: tuple[Objective, ...] | None,
) -> AttemptRecord:
    """One attempt: fork, run the agent, judge, collect usage, drop the fork."""
    started = time.perf_counter()
    try:
        session_id = await sandbox.fork(turn.base_session_id, labels={ATTEMPT_LABEL: str(index)},
                                        note=feedback.text if feedback is not None else None)
    except GeckoError as exc:
        elapsed = time.perf_counter() - started
        return AttemptRecord(index, "error", None, None, feedback, error=f"fork failed: {exc}",
                             latency=AttemptLatency(fork_s=elapsed, total_s=elapsed))
    forked = time.perf_counter()
    run: AgentRun | None
    run_error: str | None = None
    judge_error: str | None = None
    executor = ToolExecutor(catalog, sandbox.backend(session_id))
    try:
        run = await agent.run(AgentRequest(turn.messages, feedback, index), executor)
    except AgentError as exc:
        run, run_error = exc.partial, f"{exc.kind}: {exc}"
    ran_at = time.perf_counter()
    usage: list[dict[str, Any]] = list(run.usage) if run is not None else []
    verdict: Verdict | None = None
    if run_error is None and config.judging:
        checklist = None if objectives is None else [{"id": o.id, "description": o.description} for o in objectives]
        try:
            reply = await sandbox.judge(session_id, task=turn.task, agent_response=run.final_text if run else None,
                                        checklist=checklist, expects_tool_call=turn.expects_tool_call)
            verdict = verdict_from(reply)
            if not config.collect_server_usage:  # else it comes with the session's usage, failed calls included
                usage.extend(reply.usage)
        except GeckoError as exc:
            judge_error = f"judge failed: {exc}"
    judged_at = time.perf_counter()
    if config.collect_server_usage:
        try:
            usage.extend(await sandbox.usage(session_id))
        except GeckoError:
            pass  # usage is bookkeeping; its loss does not change the attempt's outcome
    if not config.keep_sessions:
        await sandbox.delete(session_id)
    calls = run.calls if run is not None else ()
    status = attempt_status(ran=run_error is None, judged=config.judging, verdict=verdict, calls=calls)
    latency = AttemptLatency(fork_s=forked - started, agent_s=ran_at - forked, judge_s=judged_at - ran_at,
                             total_s=time.perf_counter() - started)
    error = run_error or judge_error
    return AttemptRecord(index, status, session_id, run, feedback, verdict, error, tuple(usage), latency)


async def run_turn(
    turn: TurnInput,
    agent: Agent,
    sandbox: Sandbox,
    catalog: ToolCatalog,
    config: GatsConfig,
    *,
    feedback_prompt: Prompt | None = None,
) -> TurnResult:
    """Solve one turn with up to `config.max_retries + 1` simulated attempts.

    Args:
        turn: The request, the conversation, and the turn-start session.
        agent: The agent (one instance per turn: scripted agents remember their fixes).
        sandbox: The simulator (forks, backend, checklist, judge).
        catalog: The tools offered to the agent.
        config: Retries, judging, checklist.
        feedback_prompt: Template of the retry feedback (default: `gats/prompts/retry_feedback.md`).

    Returns:
        Every attempt, the best one, and the turn's status (`untested` when the checklist or any attempt failed
        for infrastructure reasons; the attempts stop there).
    """
    started = time.perf_counter()
    prompt = feedback_prompt or load_feedback_prompt()
    objectives, checklist_error, unavailable = await _objectives(turn, sandbox, config)
    attempts: list[AttemptRecord] = []
    if unavailable:
        return TurnResult("untested", (), None, None, checklist_error, time.perf_counter() - started)
    feedback: RetryFeedback | None = None
    for index in range(config.max_retries + 1):
        attempt = await run_attempt(index, turn, agent, sandbox, catalog, config, feedback, objectives)
        attempts.append(attempt)
        if should_stop(attempt) or attempt.status in INFRASTRUCTURE_STATUSES:
            break
        feedback = build_feedback(attempt, prompt, config.feedback_chars)
    best = best_attempt(attempts)
    status = turn_status(attempts, best)
    return TurnResult(status, tuple(attempts), None if status == "untested" else best, objectives, checklist_error,
                      time.perf_counter() - started)
