"""The official reward: DB replay, communicated info, NL assertions through a judge, basis, metrics."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.evaluate import Evaluator, check_communicate, evaluate
from benchmarks.taubench.loader import DataStore
from benchmarks.taubench.messages import AssistantMessage, Message, MessageToolCall, ToolMessage, UserMessage
from benchmarks.taubench.metrics import compute_metrics, pass_hat_k
from benchmarks.taubench.results import NLAssertionCheck, RewardInfo, SimulationRun, TerminationReason
from benchmarks.taubench.tasks import EvaluationCriteria, RewardType, Task

STOP = TerminationReason.USER_STOP


def _criteria(task: Task) -> EvaluationCriteria:
    assert task.evaluation_criteria is not None
    return task.evaluation_criteria


def _gold_conversation(runtime: DomainRuntime, task: Task, *, say: str | None = None) -> list[Message]:
    """Greeting, request, the gold actions executed for real, a closing text, the user's stop."""
    env = runtime.environment()
    messages: list[Message] = [AssistantMessage(content="Hi! How can I help you today?"), UserMessage(content="help")]
    for index, action in enumerate(_criteria(task).actions or []):
        call = MessageToolCall(id=f"c{index}", name=action.name, arguments=action.arguments)
        messages += [AssistantMessage(tool_calls=[call]), env.respond(call)]
    infos = _criteria(task).communicate_info or []
    messages += [AssistantMessage(content=say if say is not None else " ".join(infos)), UserMessage(content="###STOP###")]
    return messages


def _task_with_writes(store: DataStore, task_set: str = "v1") -> Task:
    runtime = DomainRuntime("airline", store, task_set)
    return next(t for t in store.tasks("airline", task_set) if any(runtime.is_write(a.name) for a in _criteria(t).actions or []))


def test_gold_conversation_scores_one_with_and_without_fast_path(airline: DomainRuntime, store: DataStore) -> None:
    task = _task_with_writes(store)
    messages = _gold_conversation(airline, task)
    for fast in (True, False):
        info = evaluate(airline, task, messages, STOP, fast_path=fast)
        assert info.reward == 1.0 and info.graded and info.db_check and info.db_check.db_match
        assert info.reward_breakdown == {RewardType.DB: 1.0, RewardType.COMMUNICATE: 1.0}
        assert all(check.action_match for check in info.action_checks or [])
    assert evaluate(airline, task, messages, STOP, fast_path=False).info["env"]["replay_mismatches"] == 0


def test_missing_write_fails_the_db_check(airline: DomainRuntime, store: DataStore) -> None:
    task = _task_with_writes(store)
    messages = _gold_conversation(airline, task)
    last_write = max(
        i for i, m in enumerate(messages)
        if isinstance(m, AssistantMessage) and m.tool_calls and airline.is_write(m.tool_calls[0].name)
    )
    trimmed = messages[:last_write] + messages[last_write + 2:]
    for fast in (True, False):
        info = evaluate(airline, task, trimmed, STOP, fast_path=fast)
        assert info.reward == 0.0 and info.db_check is not None and not info.db_check.db_match
    checks = evaluate(airline, task, trimmed, STOP).action_checks or []
    assert not all(check.action_match for check in checks)


def test_read_calls_and_unknown_tools_do_not_change_the_db(airline: DomainRuntime, store: DataStore) -> None:
    task = store.task("airline", "1", "v1")  # read-only gold actions
    extra = [
        AssistantMessage(tool_calls=[MessageToolCall(id="r1", name="get_user_details", arguments={"user_id": "raj_sanchez_7340"})]),
        ToolMessage(id="r1", content="{}"),
        AssistantMessage(tool_calls=[MessageToolCall(id="r2", name="delete_everything", arguments={})]),
        ToolMessage(id="r2", content="Error: Tool 'delete_everything' not found.", error=True),
    ]
    info = evaluate(airline, task, extra + [UserMessage(content="###STOP###")], STOP)
    assert info.db_check is not None and info.db_check.db_match and info.reward == 1.0


def test_communicate_check_is_lowercase_substring_without_commas(store: DataStore) -> None:
    task = next(t for t in store.tasks("retail", "v0") if _criteria(t).communicate_info)
    info = (_criteria(task).communicate_info or [""])[0]
    said = [AssistantMessage(content=f"THE TOTAL IS {info.upper()}, thanks")]
    assert check_communicate(task, said)[0].met
    assert not check_communicate(task, [UserMessage(content=info)])[0].met  # only the agent's texts count
    if any(ch.isdigit() for ch in info) and len(info) > 3:
        with_comma = info[:-3] + "," + info[-3:]
        assert check_communicate(task, [AssistantMessage(content=with_comma)])[0].met


def test_premature_endings_score_zero_and_infrastructure_is_untested(airline: DomainRuntime, store: DataStore) -> None:
    task = store.task("airline", "0", "v1")
    for reason in (TerminationReason.MAX_STEPS, TerminationReason.TOO_MANY_ERRORS, TerminationReason.AGENT_ERROR):
        info = evaluate(airline, task, [], reason)
        assert info.reward == 0.0 and info.graded and info.reward_basis is None
    untested = evaluate(airline, task, [], TerminationReason.INFRASTRUCTURE_ERROR)
    assert untested.reward == 0.0 and not untested.graded


def test_nl_tasks_are_not_graded_without_a_judge(retail: DomainRuntime, store: DataStore) -> None:
    task = next(t for t in store.tasks("retail", "v1") if t.needs_judge())
    info = evaluate(retail, task, _gold_conversation(retail, task), STOP)
    assert not info.graded and info.reward == 0.0
    assert RewardType.NL_ASSERTION not in (info.reward_breakdown or {})
    assert "judge" in (info.info or {})["nl"]


def test_nl_basis_with_no_assertions_needs_no_judge(retail: DomainRuntime, store: DataStore) -> None:
    task = next(
        t for t in store.tasks("retail", "v1")
        if RewardType.NL_ASSERTION in t.reward_basis and not _criteria(t).nl_assertions
    )
    info = evaluate(retail, task, _gold_conversation(retail, task), STOP)
    assert info.graded and info.reward == 1.0 and (info.reward_breakdown or {})[RewardType.NL_ASSERTION] == 1.0


class _Judge:
    def __init__(self, verdict: bool | None, fail: bool = False) -> None:
        self.verdict, self.fail, self.calls = verdict, fail, 0

    async def __call__(self, messages: Sequence[Message], assertions: Sequence[str]) -> list[NLAssertionCheck]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("judge is down")
        count = len(assertions) if self.verdict is not None else 0
        return [NLAssertionCheck(nl_assertion=a, met=bool(self.verdict), justification="j") for a in assertions][:count]


def _simulation(task: Task, messages: list[Message], reason: TerminationReason = STOP) -> SimulationRun:
    return SimulationRun(id="s", task_id=task.id, start_time="t", end_time="t", duration=0.0,
                         termination_reason=reason, messages=messages)


async def test_judge_verdicts_gate_the_reward(retail: DomainRuntime, store: DataStore) -> None:
    task = next(t for t in store.tasks("retail", "v1") if t.needs_judge())
    simulation = _simulation(task, _gold_conversation(retail, task))
    yes, no = _Judge(True), _Judge(False)
    passed = await Evaluator(retail, yes).grade(task, simulation)
    assert passed.graded and passed.reward == 1.0 and yes.calls == 1
    failed = await Evaluator(retail, no).grade(task, simulation)
    assert failed.graded and failed.reward == 0.0 and (failed.reward_breakdown or {})[RewardType.NL_ASSERTION] == 0.0
    broken = await Evaluator(retail, _Judge(True, fail=True)).grade(task, simulation)
    assert not broken.graded and broken.reward == 0.0 and "judge is down" in (broken.info or {})["nl_error"]
    short = await Evaluator(retail, _Judge(None)).grade(task, simulation)
    assert not short.graded
    unused = _Judge(True)
    await Evaluator(retail, unused).grade(task, _simulation(task, [], TerminationReason.MAX_STEPS))
    assert unused.calls == 0


async def test_evaluator_without_judge_matches_evaluate(airline: DomainRuntime, store: DataStore) -> None:
    task = _task_with_writes(store)
    simulation = _simulation(task, _gold_conversation(airline, task, say="nothing"))
    graded = await Evaluator(airline).grade(task, simulation)
    assert graded == evaluate(airline, task, simulation.messages, STOP)


def test_pass_hat_k_and_metrics() -> None:
    assert pass_hat_k(4, 2, 1) == 0.5 and pass_hat_k(4, 2, 2) == 1 / 6 and pass_hat_k(4, 4, 4) == 1.0
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)

    def run(task_id: str, reward: float, graded: bool = True, reason: TerminationReason = STOP) -> SimulationRun:
        return SimulationRun(id="x", task_id=task_id, start_time="", end_time="", duration=0.0, termination_reason=reason,
                             messages=[], reward_info=RewardInfo(reward=reward, graded=graded))

    metrics = compute_metrics([
        run("a", 1.0), run("a", 1.0), run("b", 1.0), run("b", 0.0),
        run("c", 0.0, graded=False), run("a", 0.0, reason=TerminationReason.INFRASTRUCTURE_ERROR),
    ])
    assert (metrics.num_graded, metrics.num_not_graded, metrics.num_untested, metrics.num_tasks) == (4, 1, 1, 2)
    assert metrics.avg_reward == 0.75
    assert metrics.pass_hat_ks == {1: 0.75, 2: 0.5}
