"""Per-turn GATS with real execution against fakes (no server): the real run gets the plan, its calls (not
the plan's) are the answer, divergence is counted, real results are synced onto the turn-start session,
the next turn sees the real history, and a failed sync or real run makes the conversation `untested`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gats import GatsConfig, TurnInput, run_turn
from gats.plan import build_plan, divergence, load_plan_prompt, provenance
from gats.replay import PlanReplayAgent
from gats.turns import ConversationTurn, RealTurnSetup, TurnAgents, run_conversation
from inference.agents import AgentInfrastructureError, AgentRequest, AgentRun, AgentStep
from inference.gecko import ChecklistReply, GeckoUnavailableError, ItemVerdict, JudgeReply
from inference.tools import CatalogTool, ToolCallRequest, ToolCatalog, ToolExecutor, ToolOutcome

SPECS = [CatalogTool("Files", "cd", "cd", "cd", access="write"), CatalogTool("Files", "ls", "ls", "ls", access="read"),
         CatalogTool("Files", "rm", "rm", "rm", access="write")]
CATALOG = ToolCatalog(SPECS)


class Backend:
    """Records every call with the name of its environment (a session, or `real`)."""

    def __init__(self, where: str, log: list[tuple[str, str, dict[str, Any]]]) -> None:
        self.where, self.log = where, log

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        self.log.append((self.where, tool.original_name, arguments))
        return ToolOutcome(True, f'{{"{self.where}": "{tool.original_name}"}}', status=200)


class Sandbox:
    """Forks are names; the judge passes every attempt."""

    def __init__(self, log: list[tuple[str, str, dict[str, Any]]]) -> None:
        self.log = log
        self.forks: list[str] = []

    async def fork(self, session_id: str, *, labels=None, note=None) -> str:
        self.forks.append(f"{session_id}/f{len(self.forks)}")
        return self.forks[-1]

    async def delete(self, session_id: str) -> None:
        return None

    def backend(self, session_id: str) -> Backend:
        return Backend(session_id, self.log)

    async def checklist(self, session_id: str, task: str, previous_tasks: Sequence[str]) -> ChecklistReply:
        return ChecklistReply(task=task, items=[{"id": "1", "description": task}], engine="fake")

    async def judge(self, session_id: str, *, task: str, agent_response: str | None,
                    checklist: Sequence[dict[str, str]] | None, expects_tool_call: bool = False) -> JudgeReply:
        return JudgeReply(success=True, items=[ItemVerdict(id="1", description=task, status="success")],
                          remaining=[], engine="fake")

    async def usage(self, session_id: str) -> list[dict[str, Any]]:
        return []


class Sync:
    """Records pushes; fails on the listed push numbers."""

    def __init__(self, fail_on: Sequence[int] = ()) -> None:
        self.pushes: list[tuple[str, list[Mapping[str, Any]]]] = []
        self.fail_on = set(fail_on)

    async def push(self, session_id: str, calls: Sequence[Mapping[str, Any]]) -> int:
        self.pushes.append((session_id, list(calls)))
        if len(self.pushes) - 1 in self.fail_on:
            raise GeckoUnavailableError("update-state-from-real: 503")
        return len(self.pushes)


class Calls:
    """Makes fixed calls `(name, arguments)` in one step; records its requests."""

    def __init__(self, calls: Sequence[tuple[str, dict[str, Any]]], fail: bool = False) -> None:
        self.name = "calls"
        self.calls, self.fail = list(calls), fail
        self.requests: list[AgentRequest] = []

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        self.requests.append(request)
        if self.fail:
            raise AgentInfrastructureError("LLM down")
        records = [await tools.execute(ToolCallRequest(f"c{i}", n, a), 0) for i, (n, a) in enumerate(self.calls)]
        return AgentRun(self.name, (AgentStep(0, None, tuple(records)), AgentStep(1, "ok", ())), "ok", "answer")


TURNS = [ConversationTurn("go to docs", ({"role": "user", "content": "go to docs"},)),
         ConversationTurn("list it", ({"role": "user", "content": "list it"},))]


def _setup(log: list, sim: Sequence[Calls], real: Sequence[Calls], sync: Sync) -> RealTurnSetup:
    return RealTurnSetup(agents=TurnAgents(simulated=lambda i: sim[i], real=lambda i, plan: real[i]),
                         sandbox=Sandbox(log), catalog=CATALOG, real_backend=Backend("real", log), sync=sync,
                         config=GatsConfig(max_retries=1, generate_checklist=True))


async def test_simulate_then_execute_then_sync_each_turn() -> None:
    log: list = []
    sync = Sync()
    sim = [Calls([("cd", {"folder": "docs"})]), Calls([("ls", {})])]
    real = [Calls([("cd", {"folder": "docs"})]), Calls([("ls", {})])]
    result = await run_conversation(TURNS, "base", _setup(log, sim, real, sync))
    assert result.status == "completed" and [t.status for t in result.turns] == ["success", "success"]
    assert [w for w, _, _ in log] == ["base/f0", "real", "base/f1", "real"]
    assert [(sid, [c["name"] for c in calls]) for sid, calls in sync.pushes] == [("base", ["cd"]), ("base", ["ls"])]
    assert sync.pushes[0][1][0] == {"name": "cd", "arguments": {"folder": "docs"}, "result": '{"real": "cd"}',
                                    "toolkit": "Files"}
    assert [t.state_version for t in result.turns] == [1, 2]
    first_real = real[0].requests[0].messages
    assert first_real[-1]["role"] == "user" and "cd(" in first_real[-1]["content"]  # the plan, as advice
    second_sim = sim[1].requests[0].messages  # real history of turn 0, not the simulated one
    assert [m["role"] for m in second_sim] == ["user", "assistant", "tool", "assistant", "user"]
    assert second_sim[2]["content"] == '{"real": "cd"}'
    assert all(t.divergence is not None and not t.divergence.diverged for t in result.turns)


async def test_real_calls_count_when_the_real_run_diverges_from_the_plan() -> None:
    log: list = []
    sim = [Calls([("cd", {"folder": "docs"}), ("rm", {"file": "a"})]), Calls([("ls", {})])]
    real = [Calls([("ls", {}), ("cd", {"folder": "docs"})]), Calls([("ls", {})])]
    sync = Sync()
    result = await run_conversation(TURNS, "base", _setup(log, sim, real, sync))
    first = result.turns[0]
    assert [c.name for c in first.real_calls] == ["ls", "cd"]
    assert [s.name for s in first.plan.steps] == ["cd", "rm"]
    d = first.divergence
    assert (d.planned, d.executed, d.matched) == (2, 2, 1) and d.diverged
    assert d.unplanned == ("ls({})",) and d.skipped == ('rm({"file":"a"})',)
    assert [c["name"] for c in sync.pushes[0][1]] == ["ls", "cd"]  # the real calls are synced, not the plan
    assert ("real", "rm", {"file": "a"}) not in log


async def test_sync_failure_makes_the_conversation_untested_and_stops_it() -> None:
    log: list = []
    sim = [Calls([("cd", {"folder": "docs"})]), Calls([("ls", {})])]
    real = [Calls([("cd", {"folder": "docs"})]), Calls([("ls", {})])]
    result = await run_conversation(TURNS, "base", _setup(log, sim, real, Sync(fail_on=[0])))
    assert result.status == "untested" and len(result.turns) == 1
    assert result.turns[0].status == "untested" and "sync" in (result.turns[0].error or "")
    assert result.turns[0].real_calls  # what ran for real is kept in the trace
    assert "turn 0" in (result.error or "")
    assert sim[1].requests == []


async def test_real_run_infrastructure_failure_is_untested() -> None:
    log: list = []
    sim = [Calls([("cd", {"folder": "docs"})]), Calls([("ls", {})])]
    real = [Calls([], fail=True), Calls([("ls", {})])]
    sync = Sync()
    result = await run_conversation(TURNS, "base", _setup(log, sim, real, sync))
    assert result.status == "untested" and result.turns[0].status == "untested"
    assert "real run" in (result.turns[0].error or "") and sync.pushes == []


async def test_turn_without_real_calls_syncs_nothing() -> None:
    log: list = []
    sync = Sync()
    result = await run_conversation(TURNS[:1], "base", _setup(log, [Calls([])], [Calls([])], sync))
    assert result.status == "completed" and sync.pushes == [] and result.turns[0].state_version is None
    assert result.turns[0].plan is None


def test_provenance_keeps_user_literals_and_rederives_the_rest() -> None:
    marks = provenance({"folder": "docs", "id": 4711, "flag": True, "tags": ["a", "zz"]}, "go to docs, tag a")
    assert marks == {"folder": "keep", "id": "re-derive", "flag": "keep", "tags": "re-derive"}


async def test_plan_replay_makes_the_plan_calls_and_divergence_without_plan() -> None:
    log: list = []
    sandbox = Sandbox(log)
    turn = TurnInput("go", ({"role": "user", "content": "go to docs"},), "base")
    sim = await run_turn(turn, Calls([("cd", {"folder": "docs"})]), sandbox, CATALOG, GatsConfig(max_retries=0))
    plan = build_plan(sim.best, ["go to docs"], load_plan_prompt())
    assert plan is not None and plan.status == "skipped" and "not judged" in plan.text
    run = await PlanReplayAgent(plan).run(AgentRequest(()), ToolExecutor(CATALOG, Backend("real", log)))
    assert [c.name for c in run.calls] == ["cd"] and divergence(plan, run.calls).diverged is False
    assert divergence(None, run.calls).unplanned == ('cd({"folder":"docs"})',)
