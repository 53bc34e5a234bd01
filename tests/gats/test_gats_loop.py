"""The GATS loop against a fake sandbox and fake agents: forks, stop on success, feedback, best-attempt
choice, judge failure (`unjudged`, never success), infrastructure failure (`untested`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from gats import (
    AttemptRecord,
    GatsConfig,
    TurnInput,
    Verdict,
    attempt_status,
    best_attempt,
    run_turn,
    should_stop,
    turn_status,
)
from inference.agents import AgentInfrastructureError, AgentRequest, AgentRun, AgentStep
from inference.gecko import ChecklistReply, GeckoJudgeError, GeckoUnavailableError, ItemVerdict, JudgeReply
from inference.tools import (
    CallRecord,
    CatalogTool,
    ToolCallRequest,
    ToolCatalog,
    ToolError,
    ToolExecutor,
    ToolOutcome,
    error_content,
)

SPEC = CatalogTool("tk", "add", "math.add", "add", parameters={
    "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False})
CATALOG = ToolCatalog([SPEC])


class FakeBackend:
    """Accepts `a` as an integer; anything else is a 422."""

    def __init__(self, session: str, log: list[tuple[str, dict]]) -> None:
        self.session = session
        self.log = log

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        self.log.append((self.session, arguments))
        if isinstance(arguments.get("a"), int):
            return ToolOutcome(True, '{"sum": 1}', body={"sum": 1}, status=200)
        error = ToolError("Argument 'a' must be an integer.", "/a", "type", "syntactic")
        return ToolOutcome(False, error_content("Invalid tool arguments", error.message, (error,)), status=422,
                           error_kind="invalid_arguments", errors=(error,))


class FakeSandbox:
    """Sessions are names; the judge passes an attempt iff all of its session's calls were accepted."""

    def __init__(self, judge_fails: Sequence[int] = (), fork_fails: bool | Sequence[int] = False,
                 checklist_fails: bool = False) -> None:
        self.forks: list[str] = []
        self.fork_notes: list[tuple[dict[str, str], str | None]] = []
        self.deleted: list[str] = []
        self.calls: list[tuple[str, dict]] = []
        self.judged: list[dict[str, Any]] = []
        self.judge_fails = set(judge_fails)
        self.fork_fails = fork_fails
        self.checklist_fails = checklist_fails
        self.fork_requests = 0

    async def fork(self, session_id: str, *, labels=None, note=None) -> str:
        index, self.fork_requests = self.fork_requests, self.fork_requests + 1
        if self.fork_fails is True or (not isinstance(self.fork_fails, bool) and index in self.fork_fails):
            raise GeckoUnavailableError("POST /sessions/x/fork: ConnectError after 3 tries")
        self.fork_notes.append((dict(labels or {}), note))
        name = f"{session_id}/fork{len(self.forks)}"
        self.forks.append(name)
        return name

    async def delete(self, session_id: str) -> None:
        self.deleted.append(session_id)

    def backend(self, session_id: str) -> FakeBackend:
        return FakeBackend(session_id, self.calls)

    async def checklist(self, session_id: str, task: str, previous_tasks: Sequence[str]) -> ChecklistReply:
        if self.checklist_fails:
            raise GeckoUnavailableError("POST /sessions/x/checklist: ConnectError after 3 tries")
        return ChecklistReply(task=task, items=[{"id": "1", "description": "add"}], engine="fake")

    async def judge(self, session_id: str, *, task: str, agent_response: str | None,
                    checklist: Sequence[dict[str, str]] | None, expects_tool_call: bool = False) -> JudgeReply:
        index = len(self.judged)
        self.judged.append({"session": session_id, "checklist": checklist})
        if index in self.judge_fails:
            raise GeckoJudgeError("judge down", 502)
        ok = all(isinstance(args.get("a"), int) for session, args in self.calls if session == session_id)
        status = "success" if ok else "failed"
        return JudgeReply(success=ok, items=[ItemVerdict(id="1", description="add", status=status)],
                          remaining=[] if ok else ["add"], engine="fake")

    async def usage(self, session_id: str) -> list[dict[str, Any]]:
        return [{"role": "validator", "model": "m", "input_tokens": 3, "output_tokens": 1, "latency_s": 0.1}]


class ScriptAgent:
    """Plays one list of argument dicts per attempt; raises for `None` entries."""

    name = "script"

    def __init__(self, per_attempt: Sequence[list[dict[str, Any]] | None]) -> None:
        self.per_attempt = list(per_attempt)
        self.requests: list[AgentRequest] = []

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        self.requests.append(request)
        plan = self.per_attempt[request.attempt]
        if plan is None:
            raise AgentInfrastructureError("LLM down")
        records = [await tools.execute(ToolCallRequest(f"c{i}", "add", args), 0) for i, args in enumerate(plan)]
        usage = ({"role": "planner", "model": "m", "input_tokens": 10, "output_tokens": 2, "latency_s": 0.5},)
        return AgentRun(self.name, (AgentStep(0, None, tuple(records)),), "done", "answer", usage)


def _turn() -> TurnInput:
    return TurnInput(task="add one", messages=({"role": "user", "content": "add one"},), base_session_id="base")


async def test_stops_at_first_success_and_forks_every_attempt() -> None:
    sandbox = FakeSandbox()
    agent = ScriptAgent([[{"a": "1"}], [{"a": 1}], [{"a": 1}]])
    result = await run_turn(_turn(), agent, sandbox, CATALOG, GatsConfig(max_retries=2, collect_server_usage=True,
                                                                         keep_sessions=False))
    assert [a.status for a in result.attempts] == ["failed", "success"]
    assert result.status == "success" and result.best_index == 1
    assert sandbox.forks == ["base/fork0", "base/fork1"] and sandbox.deleted == sandbox.forks
    # each fork is labelled with its attempt; the second one carries the feedback it was given as its note
    assert sandbox.fork_notes[0] == ({"attempt": "0"}, None)
    assert sandbox.fork_notes[1][0] == {"attempt": "1"} and "REJECTED" in sandbox.fork_notes[1][1]
    assert {session for session, _ in sandbox.calls} == set(sandbox.forks)
    feedback = agent.requests[1].feedback
    assert feedback is not None and feedback.attempt == 0 and feedback.remaining == ("add",)
    assert "REJECTED" in feedback.text and "must be an integer" in feedback.text
    usage = result.usage_by_role()
    assert usage["planner"]["input_tokens"] == 20 and usage["validator"]["calls"] == 2


async def test_judge_failure_is_unjudged_never_success_and_makes_the_turn_untested() -> None:
    sandbox = FakeSandbox(judge_fails=[1])
    result = await run_turn(_turn(), ScriptAgent([[{"a": "x"}], [{"a": 1}], [{"a": 1}]]), sandbox, CATALOG,
                            GatsConfig(max_retries=2))
    assert [a.status for a in result.attempts] == ["failed", "unjudged"]  # no third attempt
    assert result.status == "untested" and result.best is None
    assert result.attempts[1].error and "judge failed" in result.attempts[1].error


async def test_all_infrastructure_failures_make_the_turn_untested() -> None:
    result = await run_turn(_turn(), ScriptAgent([None, None]), FakeSandbox(), CATALOG, GatsConfig(max_retries=1))
    assert [a.status for a in result.attempts] == ["error"]  # no retry once the infrastructure failed
    assert result.status == "untested" and result.best is None
    forkless = await run_turn(_turn(), ScriptAgent([[{"a": 1}]]), FakeSandbox(fork_fails=True), CATALOG,
                              GatsConfig(max_retries=0))
    assert forkless.status == "untested" and "fork failed" in (forkless.attempts[0].error or "")


async def test_an_infrastructure_failure_at_a_later_attempt_makes_the_turn_untested_not_failed() -> None:
    # the issue's case: attempt 0 ran and was judged `failed`, then Gecko went away and attempt 1's fork failed
    agent = ScriptAgent([[{"a": "x"}], [{"a": 1}], [{"a": 1}]])
    result = await run_turn(_turn(), agent, FakeSandbox(fork_fails=[1]), CATALOG, GatsConfig(max_retries=2))
    assert [a.status for a in result.attempts] == ["failed", "error"] and len(agent.requests) == 1
    assert result.status == "untested" and "fork failed" in (result.attempts[1].error or "")
    llm_down = await run_turn(_turn(), ScriptAgent([[{"a": "x"}], None, [{"a": 1}]]), FakeSandbox(), CATALOG,
                              GatsConfig(max_retries=2))
    assert [a.status for a in llm_down.attempts] == ["failed", "error"] and llm_down.status == "untested"


async def test_a_failed_checklist_makes_the_turn_untested_before_any_attempt() -> None:
    agent = ScriptAgent([[{"a": 1}]])
    result = await run_turn(_turn(), agent, FakeSandbox(checklist_fails=True), CATALOG,
                            GatsConfig(max_retries=1, generate_checklist=True))
    assert result.status == "untested" and result.attempts == () and agent.requests == []
    assert result.checklist_error and "checklist generation failed" in result.checklist_error


async def test_baseline_runs_once_without_judge() -> None:
    sandbox = FakeSandbox()
    result = await run_turn(_turn(), ScriptAgent([[{"a": "x"}]]), sandbox, CATALOG, GatsConfig(max_retries=0))
    assert [a.status for a in result.attempts] == ["skipped"] and result.status == "skipped"
    assert sandbox.judged == []


async def test_generated_checklist_is_passed_to_every_judge_call() -> None:
    sandbox = FakeSandbox()
    config = GatsConfig(max_retries=1, generate_checklist=True)
    result = await run_turn(_turn(), ScriptAgent([[{"a": "x"}], [{"a": "y"}]]), sandbox, CATALOG, config)
    assert result.checklist is not None and [o.description for o in result.checklist] == ["add"]
    assert [j["checklist"] for j in sandbox.judged] == [[{"id": "1", "description": "add"}]] * 2


def _attempt(index: int, status: str, score: float | None, failed_calls: int, unreached: int = 0) -> AttemptRecord:
    calls = []
    for i in range(failed_calls):
        outcome = ToolOutcome(False, "{}", status=422, error_kind="invalid_arguments",
                              reached_backend=i >= unreached)
        calls.append(CallRecord(f"c{i}", 0, "add", "{}", {}, SPEC, outcome, 0.0))
    run = AgentRun("a", (AgentStep(0, None, tuple(calls)),), None, "answer")
    verdict = None if score is None else Verdict(score == 1.0, score, ())
    return AttemptRecord(index, status, "s", run, None, verdict)


@pytest.mark.parametrize(("attempts", "expected"), [
    ([("failed", 0.5, 1), ("failed", 0.0, 0)], 0),            # judge score first
    ([("failed", 0.0, 2), ("failed", 0.0, 1)], 1),            # then fewer failed calls
    ([("failed", 0.0, 1), ("failed", 0.0, 1)], 1),            # then the latest
    ([("unjudged", None, 0), ("failed", 0.5, 3)], 1),         # no verdict: no credit
    ([("error", None, 0), ("failed", 0.0, 5)], 1),            # errors never chosen
    ([("failed", 1.0, 1, 1), ("failed", 0.0, 1)], 1),         # unseen failed call: the verdict earns nothing
])
def test_best_attempt_choice(attempts: list[tuple], expected: int) -> None:
    records = [_attempt(i, *spec) for i, spec in enumerate(attempts)]
    assert best_attempt(records) == expected


def _faulted(index: int, arguments: list[dict], recovered: bool) -> AttemptRecord:
    """An attempt whose calls an injected 503 failed, retried successfully (`recovered`) or not."""
    fault = {"rule": "down", "kind": "unavailable", "level": "tool", "call": 1, "executed": False}
    calls = []
    for i, args in enumerate(arguments):
        calls.append(CallRecord(f"f{i}", 0, "add", "{}", args, SPEC, ToolOutcome(
            False, "{}", status=503, error_kind="service_error", fault=fault), 0.0))
        if recovered:
            calls.append(CallRecord(f"r{i}", 0, "add", "{}", args, SPEC, ToolOutcome(True, "{}", status=200), 0.0))
    run = AgentRun("a", (AgentStep(0, None, tuple(calls)),), None, "answer")
    return AttemptRecord(index, "skipped", "s", run, None)


def test_injected_faults_are_not_the_agents_failed_calls() -> None:
    lucky, unlucky = _attempt(0, "failed", 0.5, 1), _faulted(1, [{"a": 1}, {"a": 2}, {"a": 3}], recovered=True)
    unlucky = AttemptRecord(1, "failed", "s", unlucky.run, None, Verdict(False, 0.5, ()))
    assert (unlucky.validation_errors, unlucky.injected_errors, unlucky.unrecovered_faults) == (0, 3, 0)
    assert best_attempt([lucky, unlucky]) == 1  # fewer failed calls of its own; the faults were luck
    assert should_stop(_faulted(0, [{"a": 1}], recovered=True))  # judging off: it got through
    stuck = _faulted(0, [{"a": 1}], recovered=False)
    assert stuck.unrecovered_faults == 1 and not should_stop(stuck)


def test_statuses() -> None:
    assert best_attempt([_attempt(0, "error", None, 0)]) is None
    assert turn_status([_attempt(0, "error", None, 0)], None) == "untested"
    assert turn_status([_attempt(0, "failed", 0.5, 0), _attempt(1, "error", None, 0)], 0) == "untested"
    assert turn_status([_attempt(0, "failed", 0.5, 0), _attempt(1, "unjudged", None, 0)], 0) == "untested"
    assert turn_status([_attempt(0, "failed", 0.5, 0), _attempt(1, "failed", 0.0, 0)], 0) == "failed"
    ok = Verdict(True, 1.0, ())
    unseen = CallRecord("c", 0, "nope", "{}", {}, None,
                        ToolOutcome(False, "{}", error_kind="unknown_tool", reached_backend=False), 0.0)
    assert attempt_status(ran=True, judged=True, verdict=ok, calls=[]) == "success"
    assert attempt_status(ran=True, judged=True, verdict=ok, calls=[unseen]) == "failed"
    assert attempt_status(ran=True, judged=True, verdict=None, calls=[]) == "unjudged"
    assert attempt_status(ran=False, judged=True, verdict=ok, calls=[]) == "error"
    assert attempt_status(ran=True, judged=False, verdict=None, calls=[]) == "skipped"


async def test_forks_are_kept_by_default_for_the_viewer() -> None:
    sandbox = FakeSandbox()
    await run_turn(_turn(), ScriptAgent([[{"a": "1"}], [{"a": 1}]]), sandbox, CATALOG, GatsConfig(max_retries=1))
    assert len(sandbox.forks) == 2 and sandbox.deleted == []
