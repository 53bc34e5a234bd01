"""One airline task end to end over HTTP with the LLM stub as agent, user simulator and every Gecko model,
in GATS hybrid mode: the scripted planner cancels reservation Z7GOZK (task 19) in the rehearsal (simulated by
Gecko) and then for real; the stub user echoes the agent's closing text, which carries the stop token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.runner import RunOptions, run_benchmark
from benchmarks.taubench.benchmark import Tau2Benchmark
from benchmarks.taubench.mock_toolkits import MOCK_DIR
from benchmarks.taubench.results import Results
from benchmarks.taubench.run_config import Tau2RunConfig
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub, stub_client
from utils.procs import gecko_server

pytestmark = pytest.mark.integration
PLAN = {"steps": [
    {"tool_calls": [{"name": "get_reservation_details", "arguments": {"reservation_id": "Z7GOZK"}}]},
    {"tool_calls": [{"name": "cancel_reservation", "arguments": {"reservation_id": "Z7GOZK"}}]},
    {"content": "###STOP### Reservation Z7GOZK is cancelled."},
]}


def _gecko_args(model: str) -> list[str]:
    return ["--response-model", model, "--state-model", model, "--validation-model", model, "--judge-model", model,
            "--llm-timeout", "5", "--llm-max-attempts", "2", "--no-cache"]


async def test_one_airline_task_with_the_stub_everywhere(tmp_path: Path) -> None:
    with run_stub(StubConfig(plans=[PLAN])) as stub:
        model = stub.model("stub")
        with gecko_server([MOCK_DIR], workers=1, state_dir=tmp_path / "state", extra=_gecko_args(model)) as url:
            client = stub_client(stub)
            config = Tau2RunConfig(domain="airline", agent_llm=model, user_llm=model, task_ids=("19",),
                                   gats_mode="hybrid", gats_retries=1)
            options = RunOptions(output_dir=tmp_path, gecko_url=url, progress=False)
            summary = await run_benchmark(Tau2Benchmark(config, options), options, llm=client)
            run_dir = summary.run_dir
            await client.aclose()
        stats = stub.stats()
    results = Results.model_validate_json((run_dir / "results.json").read_text())
    simulation = results.simulations[0]
    assert simulation.termination_reason.value == "user_stop"
    assert simulation.reward_info is not None and simulation.reward_info.reward == 1.0
    calls = [c.name for m in simulation.messages if m.role == "assistant" for c in (m.tool_calls or [])]
    assert calls == ["get_reservation_details", "cancel_reservation"]
    gats = simulation.info["gats"]
    assert gats["turns"] >= 1 and gats["simulated_calls"] >= 1 and gats["real_reads"] >= 1
    first = gats["rehearsals"][0]["attempts"][0]
    assert [c["name"] for c in first["calls"]] == ["get_reservation_details", "cancel_reservation"]
    roles = set(json.loads((run_dir / "summary.json").read_text())["cost_by_role"])
    assert {"agent", "planner", "user", "judge", "responder"} <= roles, roles  # Gecko reports no checklist usage
    stages = stats["by_stage"]  # the stub answered the agent, the user and Gecko's stages over HTTP
    assert stages.get("planner", 0) >= 4 and stages.get("chat", 0) >= 2
    assert stages.get("checklist", 0) >= 1 and stages.get("judge", 0) >= 1
