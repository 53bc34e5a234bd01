"""The planner through the real OpenAI client against the local LLM stub (scripted tool calls), on a real
Gecko, inside the GATS loop: parallel calls, a 422 and an unknown tool read back as tool messages, the
retry feedback, token accounting, and the exported answer."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import pytest

from benchmarks.bfcl.answer import export_answer
from benchmarks.bfcl.loader import SingleTurnTask, load_category
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.bfcl.scoring import score_single_turn
from gats import GatsConfig, TurnInput, run_turn
from inference.agents import LLMPlannerModel, PlannerAgent, load_system_prompt
from inference.gecko import GeckoClient, GeckoSandbox, fetch_catalog
from tests.infra import missing
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub, stub_client
from utils.procs import gecko_server

TASK_ID = "simple_python_0"
GOOD = {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}
PLANS = [
    {"match": "did not succeed", "steps": [{"tool_calls": [GOOD]}, {"content": "The area is 25 square units."}]},
    {"steps": [
        {"tool_calls": [{"name": "calculate_triangle_area", "arguments": {"base": "10", "height": 5}},
                        {"name": "calculate_triangle_areaa", "arguments": {"base": 10, "height": 5}}]},
        {"content": "Done."},
    ]},
]


@pytest.fixture(scope="module")
def gecko_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Gecko (rules, no state model) serving the one toolkit of the task."""
    source = OPENAPI_DIR / "single_turn" / f"{TASK_ID}.json"
    if not source.exists():
        missing("the BFCL single-turn toolkits are not built (make toolkits)")
    toolkits = tmp_path_factory.mktemp("toolkits")
    shutil.copy(source, toolkits / source.name)
    state = tmp_path_factory.mktemp("state")
    with gecko_server([toolkits], workers=1, state_dir=state, extra=["--state-model", "none"]) as url:
        yield url


def _task() -> SingleTurnTask:
    task = next(t for t in load_category("simple_python") if t.id == TASK_ID)
    assert isinstance(task, SingleTurnTask)
    return task


@pytest.mark.integration
async def test_planner_with_stub_inside_gats(gecko_url: str) -> None:
    task = _task()
    with run_stub(StubConfig(plans=PLANS)) as stub:
        llm = stub_client(stub)
        planner = PlannerAgent(LLMPlannerModel(llm, stub.model("stub")), system_prompt=load_system_prompt())
        async with GeckoClient(gecko_url) as gecko:
            base = await gecko.create_session({"toolkits": [TASK_ID]})
            catalog = await fetch_catalog(gecko, [TASK_ID])
            turn = TurnInput(task=task.messages[0].content, base_session_id=base.session_id,
                             messages=({"role": "user", "content": task.messages[0].content},))
            result = await run_turn(turn, planner, GeckoSandbox(gecko), catalog, GatsConfig(max_retries=2))
        await llm.aclose()
    assert [a.status for a in result.attempts] == ["failed", "success"] and result.best_index == 1
    first = result.attempts[0]
    assert [c.outcome.error_kind for c in first.calls] == ["invalid_arguments", "unknown_tool"]
    assert [c.step for c in first.calls] == [0, 0]
    tool_messages = [m for m in first.run.transcript if m.get("role") == "tool"]
    assert len(tool_messages) == 2 and "must be an integer" in tool_messages[0]["content"]
    assert "did you mean: calculate_triangle_area" in tool_messages[1]["content"]
    second = result.attempts[1]
    assert second.feedback is not None and "REJECTED" in second.feedback.text
    assert [m["role"] for m in second.run.transcript][:3] == ["system", "user", "user"]
    assert second.run.transcript[2]["content"] == second.feedback.text
    assert second.final_text == "The area is 25 square units."
    planner_usage = result.usage_by_role()["planner"]
    assert planner_usage["calls"] == 4 and planner_usage["input_tokens"] > 0 and planner_usage["output_tokens"] > 0
    answer = export_answer(result.best.calls)
    assert json.dumps(answer) == json.dumps("[calculate_triangle_area(base=10, height=5)]")
    assert score_single_turn(task, answer).valid
    assert not score_single_turn(task, export_answer(first.calls)).valid
