"""The official tau2 reward, computed in-process.

For a conversation that ended by a stop (user or agent), each component of the task's reward basis
is computed and the reward is their product:

- DB: replay the conversation's write calls on a fresh DB, run the gold actions on another fresh DB,
  compare the two fingerprints (read calls cannot change a DB and are skipped; errors are ignored);
- COMMUNICATE: every `communicate_info` string, lower-cased, occurs in some agent text (lower-cased,
  commas removed);
- NL_ASSERTION: every assertion is met according to an injectable judge. With no judge the task is
  reported as not graded (`graded=False`, reward 0.0), never as passed. An empty list counts as met;
- ACTION: every gold action was called with equal arguments (computed always, counted only if in
  the basis, which airline and retail never do).

In a dual-control domain (telecom) the environment part follows tau2's set-state replay instead (`check_env`):
the task's set-up functions, then every tool call of the conversation (agent's and user's, reads included, syncing
after each), give the predicted state, on which the task's ENV_ASSERTIONs run; the DB check compares both sides'
fingerprints with the state the gold actions (both sides', no syncs, as tau2's `make_tool_call`) reach.

Any other ending scores 0.0; an infrastructure error is additionally marked not graded ("untested").
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Optional

from benchmarks.taubench.domain_tools import db_hash
from benchmarks.taubench.environment import DomainRuntime, WriteCall, canonical_writes
from benchmarks.taubench.messages import AssistantMessage, Message, MessageToolCall, ToolMessage, UserMessage
from benchmarks.taubench.results import (
    GRADED_TERMINATIONS,
    ActionCheck,
    CommunicateCheck,
    DBCheck,
    EnvAssertionCheck,
    NLAssertionCheck,
    RewardInfo,
    SimulationRun,
    TerminationReason,
)
from benchmarks.taubench.tasks import RewardType, Task

NLJudge = Callable[[Sequence[Message], Sequence[str]], Awaitable[Sequence[NLAssertionCheck]]]
"""Judge of natural-language assertions: (conversation, assertions) → one verdict per assertion."""

_ENV_BASIS = {RewardType.DB, RewardType.ENV_ASSERTION}


def tool_calls(messages: Sequence[Message]) -> list[MessageToolCall]:
    """Every tool call made in a conversation, in order (agent and user)."""
    calls: list[MessageToolCall] = []
    for message in messages:
        if isinstance(message, (AssistantMessage, UserMessage)) and message.tool_calls:
            calls.extend(message.tool_calls)
    return calls


def check_db(
    runtime: DomainRuntime, task: Task, messages: Sequence[Message], *, fast_path: bool = True
) -> tuple[DBCheck, dict[str, Any]]:
    """Compare the DB the conversation produced with the DB the gold actions produce.

    Args:
        runtime: the task's domain.
        task: the task (its gold actions).
        messages: the conversation.
        fast_path: use what the write sequences determine (the tools are deterministic): identical
            sequences give equal DBs without building any, and a sequence fingerprinted before
            (by an environment of this runtime, or an earlier grading) is not replayed again.
            Disable to build and fingerprint both DBs every time.

    Returns:
        The check and diagnostic info (write counts, method, replayed writes whose result differs
        from the one recorded in the conversation).
    """
    criteria = task.evaluation_criteria
    if criteria is None or (criteria.actions is None and criteria.env_assertions is None):
        return DBCheck(db_match=True, db_reward=1.0), {"note": "No expected actions or env assertions"}
    results = {message.id: message for message in messages if isinstance(message, ToolMessage)}
    predicted = [
        (WriteCall(call.name, call.arguments), results.get(call.id))
        for call in tool_calls(messages)
        if call.requestor == "assistant" and runtime.is_write(call.name)
    ]
    gold = [
        WriteCall(action.name, action.arguments)
        for action in criteria.actions or []
        if action.requestor == "assistant" and runtime.is_write(action.name)
    ]
    predicted_writes = [write for write, _ in predicted]
    info: dict[str, Any] = {"predicted_writes": len(predicted_writes), "gold_writes": len(gold)}
    canonical = canonical_writes(predicted_writes)
    if fast_path and canonical is not None and canonical == canonical_writes(gold):
        info["method"] = "identical writes"
        return DBCheck(db_match=True, db_reward=1.0), info

    if fast_path:
        gold_hash = runtime.hash_after(gold)
        predicted_hash = runtime.cached_hash(predicted_writes)
        if predicted_hash is not None:
            info["method"] = "db hash (known write sequence)"
            match = predicted_hash == gold_hash
            return DBCheck(db_match=match, db_reward=1.0 if match else 0.0), info
    else:
        gold_hash = db_hash(runtime.replay(gold).db)
    predicted_env = runtime.environment()
    mismatches = 0
    for write, recorded in predicted:
        outcome = predicted_env.execute(write.name, write.arguments)
        if recorded is not None and recorded.content != outcome.content:
            mismatches += 1
    predicted_hash = predicted_env.db_hash() if fast_path else db_hash(predicted_env.db)
    match = predicted_hash == gold_hash
    info["method"] = "db hash"
    info["replay_mismatches"] = mismatches
    return DBCheck(db_match=match, db_reward=1.0 if match else 0.0), info


def check_env(
    runtime: DomainRuntime, task: Task, messages: Sequence[Message]
) -> tuple[DBCheck, list[EnvAssertionCheck], dict[str, Any]]:
    """tau2's environment check of a dual-control task: both sides' DBs against the gold ones, then the assertions.

    Args:
        runtime: the task's domain.
        task: the task (initial state, gold actions, env assertions).
        messages: the conversation.

    Returns:
        The DB check, one check per env assertion (an assertion that raises is not met; the error is in the info),
        and diagnostic info (replayed calls whose result differs from the recorded one).
    """
    criteria = task.evaluation_criteria
    assert criteria is not None
    results = {message.id: message for message in messages if isinstance(message, ToolMessage)}
    predicted = runtime.environment(task.initial_state)
    mismatches = []
    for call in tool_calls(messages):
        outcome = predicted.execute(call.name, call.arguments, requestor=call.requestor)
        recorded = results.get(call.id)
        if recorded is not None and _parsed(recorded.content or "") != _parsed(outcome.content):
            mismatches.append(call.name)
    predicted.sync()
    gold = runtime.environment(task.initial_state)
    for action in criteria.actions or []:
        gold.execute(action.name, action.arguments, requestor=action.requestor, sync=False)
    match = predicted.db_hash() == gold.db_hash() and predicted.user_db_hash() == gold.user_db_hash()
    info: dict[str, Any] = {"replay_mismatches": mismatches} if mismatches else {}
    checks = []
    for assertion in criteria.env_assertions or []:
        try:
            met = predicted.check(assertion)
        except Exception as exc:  # tau2 would stop grading; we record the assertion as not met
            met = False
            info.setdefault("assertion_errors", []).append(f"{assertion.func_name}: {type(exc).__name__}: {exc}")
        checks.append(EnvAssertionCheck(env_assertion=assertion, met=met, reward=1.0 if met else 0.0))
    return DBCheck(db_match=match, db_reward=1.0 if match else 0.0), checks, info


def _parsed(content: str) -> Any:
    try:
        return json.loads(content)
    except json.JSONDecodeError:
        return content


def check_communicate(task: Task, messages: Sequence[Message]) -> list[CommunicateCheck]:
    """tau2's substring check of `communicate_info` in the agent's texts (commas ignored)."""
    infos = (task.evaluation_criteria.communicate_info if task.evaluation_criteria else None) or []
    texts = [
        message.content
        for message in messages
        if isinstance(message, AssistantMessage) and message.has_text() and message.content is not None
    ]
    checks = []
    for info in infos:
        said = next((text for text in texts if info.lower() in text.lower().replace(",", "")), None)
        checks.append(
            CommunicateCheck(
                info=info,
                met=said is not None,
                justification=f"Found {info!r} in: {said!r}" if said is not None else f"{info!r} was never said.",
            )
        )
    return checks


def check_actions(runtime: DomainRuntime, task: Task, messages: Sequence[Message]) -> list[ActionCheck]:
    """For each gold action, whether some tool call of the conversation matches it."""
    actions = (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
    calls = tool_calls(messages)
    checks = []
    for action in actions:
        matched = any(action.matches(call) for call in calls)
        try:
            tool_type: Optional[str] = runtime.tool_type(action.name)
        except KeyError:
            tool_type = None
        checks.append(
            ActionCheck(action=action, action_match=matched, action_reward=1.0 if matched else 0.0, tool_type=tool_type)
        )
    return checks


def evaluate(
    runtime: DomainRuntime,
    task: Task,
    messages: Sequence[Message],
    termination_reason: TerminationReason,
    *,
    nl_checks: Optional[Sequence[NLAssertionCheck]] = None,
    fast_path: bool = True,
) -> RewardInfo:
    """Grade a conversation with the official semantics (deterministic part; judge verdicts given).

    Args:
        runtime: the task's domain and task set.
        task: the task, with its evaluation criteria.
        messages: the whole conversation.
        termination_reason: how it ended.
        nl_checks: the judge's verdicts on the task's NL assertions, if a judge ran.
        fast_path: see `check_db`.

    Returns:
        The reward info. `graded` is False when NL assertions count but no verdicts (or not one per
        assertion) were given, and for infrastructure errors; the reward is then 0.0 and must be
        left out of the metrics.

    """
    if termination_reason not in GRADED_TERMINATIONS:
        return RewardInfo(
            reward=0.0,
            reward_basis=None,
            graded=termination_reason != TerminationReason.INFRASTRUCTURE_ERROR,
            info={"note": f"Simulation terminated prematurely. Termination reason: {termination_reason.value}"},
        )
    criteria = task.evaluation_criteria
    if criteria is None:
        return RewardInfo(reward=1.0, reward_basis=None, info={"note": "No evaluation criteria"})
    basis = set(criteria.reward_basis)

    env_checks: list[EnvAssertionCheck] = []
    if runtime.dual_control or criteria.env_assertions:
        if criteria.actions is None and criteria.env_assertions is None:
            db_check, db_info = DBCheck(db_match=True, db_reward=1.0), {"note": "No expected actions or env assertions"}
        else:
            db_check, env_checks, db_info = check_env(runtime, task, messages)
    else:
        db_check, db_info = check_db(runtime, task, messages, fast_path=fast_path)
    action_checks = check_actions(runtime, task, messages)
    communicate_checks = check_communicate(task, messages)
    components: dict[RewardType, float] = {}
    info: dict[str, Any] = {"env": db_info}
    graded = True
    if basis & _ENV_BASIS:
        if RewardType.DB in basis:
            components[RewardType.DB] = db_check.db_reward
        if RewardType.ENV_ASSERTION in basis:
            components[RewardType.ENV_ASSERTION] = float(all(check.met for check in env_checks))
    if RewardType.ACTION in basis:
        components[RewardType.ACTION] = float(all(check.action_match for check in action_checks))
    nl_result: Optional[list[NLAssertionCheck]] = None
    if RewardType.NL_ASSERTION in basis:
        if not criteria.nl_assertions:
            components[RewardType.NL_ASSERTION] = 1.0
            nl_result = []
        elif nl_checks is None:
            graded = False
            info["nl"] = "not graded: the task's NL assertions need a judge and none was configured"
        elif len(nl_checks) != len(criteria.nl_assertions):
            graded = False
            info["nl"] = f"not graded: the judge gave {len(nl_checks)} verdicts for {len(criteria.nl_assertions)} assertions"
        else:
            nl_result = list(nl_checks)
            components[RewardType.NL_ASSERTION] = float(all(check.met for check in nl_result))
    if RewardType.COMMUNICATE in basis:
        components[RewardType.COMMUNICATE] = float(all(check.met for check in communicate_checks))

    reward = 1.0
    for value in components.values():
        reward *= value
    return RewardInfo(
        reward=reward if graded else 0.0,
        db_check=db_check,
        env_assertions=env_checks,
        action_checks=action_checks,
        nl_assertions=nl_result,
        communicate_checks=communicate_checks,
        reward_basis=list(criteria.reward_basis),
        reward_breakdown=components,
        info=info,
        graded=graded,
    )


def evaluate_simulation(
    runtime: DomainRuntime,
    task: Task,
    simulation: SimulationRun,
    *,
    nl_checks: Optional[Sequence[NLAssertionCheck]] = None,
) -> RewardInfo:
    """`evaluate` applied to a simulation run (no judge: NL-judged tasks come back not graded)."""
    return evaluate(runtime, task, simulation.messages, simulation.termination_reason, nl_checks=nl_checks)


class Evaluator:
    """Grades simulations of one domain, calling the NL judge when a task needs it.

    Attributes:
        runtime: the domain and task set.
        judge: the NL-assertion judge, or None (NL-judged tasks are then not graded).
    """

    def __init__(self, runtime: DomainRuntime, judge: Optional[NLJudge] = None) -> None:
        self.runtime = runtime
        self.judge = judge

    async def grade(self, task: Task, simulation: SimulationRun) -> RewardInfo:
        """Grade one simulation; the deterministic part runs in a worker thread.

        A judge failure leaves the task not graded, with the error recorded in `info["nl_error"]`.
        """
        nl_checks: Optional[Sequence[NLAssertionCheck]] = None
        error: Optional[str] = None
        needs_judge = simulation.termination_reason in GRADED_TERMINATIONS and task.needs_judge()
        if needs_judge and self.judge is not None and task.evaluation_criteria is not None:
            assertions = list(task.evaluation_criteria.nl_assertions or [])
            try:
                nl_checks = await self.judge(simulation.messages, assertions)
            except Exception as exc:  # a broken judge must never grade: record and leave ungraded
                error = f"{type(exc).__name__}: {exc}"
        reward = await asyncio.to_thread(
            evaluate, self.runtime, task, simulation.messages, simulation.termination_reason, nl_checks=nl_checks
        )
        if error is not None:
            reward.info = {**(reward.info or {}), "nl_error": error}
        return reward
