"""Two turns of one BFCL multi-turn task with every model role on the LLM stub, over HTTP: the planner
(simulated attempts and the real run, through the OpenAI client) and Gecko's validator, responder, state
model and judge. Checks the per-turn flow (checklist, simulated attempt, plan, real run, sync) end to end."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import httpx
import pytest

from benchmarks.bfcl.loader import MultiTurnTask, load_tasks
from benchmarks.bfcl.multi_agents import MULTI_TURN_SYSTEM_PROMPT
from benchmarks.bfcl.multi_turn import run_multi_task
from benchmarks.bfcl.scoring import score_multi_turn
from gats import GatsConfig
from gats.turns import TurnAgents
from inference.agents import LLMPlannerModel, PlannerAgent
from inference.gecko import GeckoClient
from tests.bfcl.multi_support import multi_turn_gecko
from utils.llm import load_prompt
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub, stub_client

pytestmark = pytest.mark.integration
TASK_ID = "multi_turn_base_0"
PLANS = [  # the second turn's plan first: the first turn's words stay in the history
    {"match": "budget analysis", "steps": [
        {"tool_calls": [{"name": "cd", "arguments": {"folder": "temp"}},
                        {"name": "grep", "arguments": {"file_name": "final_report.pdf", "pattern": "budget analysis"}}]},
        {"content": "Found the budget analysis lines."}]},
    {"match": "Make sure to create the directory", "steps": [
        {"tool_calls": [{"name": "cd", "arguments": {"folder": "document"}}]},
        {"tool_calls": [{"name": "mkdir", "arguments": {"dir_name": "temp"}},
                        {"name": "mv", "arguments": {"source": "final_report.pdf", "destination": "temp"}}]},
        {"content": "Moved it."}]},
]


def _two_turns() -> MultiTurnTask:
    task = load_tasks("multi_turn_base", ids=[TASK_ID])[0]
    assert isinstance(task, MultiTurnTask)
    return dataclasses.replace(task, turns=task.turns[:2], ground_truth=task.ground_truth[:2])


async def test_two_turns_with_every_role_on_the_stub(tmp_path: Path) -> None:
    task = _two_turns()
    with run_stub(StubConfig(plans=PLANS)) as stub:
        model = stub.model()
        roles = ["--response-model", model, "--state-model", model, "--validation-model", model,
                 "--judge-model", model, "--llm-timeout", "5", "--llm-max-attempts", "2", "--no-cache"]
        with multi_turn_gecko(tmp_path, extra=roles, workers=1) as url:
            health = httpx.get(f"{url}/health").json()
            assert health["state_model_enabled"] is True and health["roles"]["state"]["model"] == model
            llm = stub_client(stub)
            planner = PlannerAgent(LLMPlannerModel(llm, stub.model("stub")),
                                   system_prompt=load_prompt(MULTI_TURN_SYSTEM_PROMPT), max_steps=6)
            agents = TurnAgents(simulated=lambda i: planner, real=lambda i, plan: planner)
            async with GeckoClient(url) as gecko:
                outcome = await run_multi_task(task, agents, gecko, GatsConfig(max_retries=1, generate_checklist=True,
                                                                                keep_sessions=True))
                assert outcome.gecko_session is not None
                history = await gecko.full_history(outcome.gecko_session)
            await llm.aclose()
    assert outcome.status == "completed", outcome.trace.get("error")
    turns = outcome.trace["turns"]
    assert [t["status"] for t in turns] != ["untested", "untested"] and len(turns) == 2
    for turn in turns:
        assert turn["simulated"]["attempts"][0]["calls"], "the simulated attempt ran on Gecko"
        assert turn["real"]["calls"] and all(c["ok"] for c in turn["real"]["calls"])
        assert turn["state_version"] is not None
    assert [c["name"] for c in turns[0]["real"]["calls"]] == ["cd", "mkdir", "mv"]
    assert [t["simulated"]["status"] for t in turns] == ["success", "success"]  # the stub judge passed them
    assert [s["name"] for s in turns[0]["plan"]["steps"]] == ["cd", "mkdir", "mv"]
    assert turns[0]["plan"]["steps"][2]["provenance"] == {"source": "keep", "destination": "keep"}
    assert not turns[0]["divergence"]["diverged"] and not turns[1]["divergence"]["diverged"]
    assert turns[1]["state_version"] > turns[0]["state_version"]
    synced = [h for h in history if h.get("tool") == "#update-state-from-real"]
    assert len(synced) == 2
    assert outcome.record is not None and outcome.record.result == [
        ["[cd(folder='document')]", "[mkdir(dir_name='temp'), mv(source='final_report.pdf', destination='temp')]"],
        ["[cd(folder='temp'), grep(file_name='final_report.pdf', pattern='budget analysis')]"]]
    assert score_multi_turn(task, outcome.record.result).valid
    counts = outcome.record.input_token_count
    assert isinstance(counts, list) and sum(sum(t) for t in counts) > 0
