"""tau2 with `agent_backend="camel"`: the GATS rehearsals run as a CAMEL ChatAgent (unmodified camel-ai) on the
stub model against Gecko's mock airline toolkit; the real agent and the user are the in-repo LLM ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.runner import RunOptions, run_benchmark
from benchmarks.taubench.benchmark import Tau2Benchmark
from benchmarks.taubench.mock_toolkits import MOCK_DIR
from benchmarks.taubench.results import Results
from benchmarks.taubench.run_config import Tau2RunConfig
from tests.infra import require_installed
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub, stub_client
from utils.procs import gecko_server

require_installed("camel", "needs the [camel] extra (make setup installs it)")
pytestmark = pytest.mark.integration
PLAN = {"steps": [
    {"tool_calls": [{"name": "get_reservation_details", "arguments": {"reservation_id": "Z7GOZK"}}]},
    {"tool_calls": [{"name": "cancel_reservation", "arguments": {"reservation_id": "Z7GOZK"}}]},
    {"content": "###STOP### Reservation Z7GOZK is cancelled."},
]}


async def test_rehearsals_run_on_camel(tmp_path: Path) -> None:
    with run_stub(StubConfig(plans=[PLAN])) as stub:
        model = stub.model("gecko-stub")
        with gecko_server([MOCK_DIR], workers=1, state_dir=tmp_path / "state") as url:
            client = stub_client(stub)
            config = Tau2RunConfig(domain="airline", agent_llm=model, user_llm=model, task_ids=("19",),
                                   gats_mode="hybrid", gats_retries=0, agent_backend="camel")
            options = RunOptions(output_dir=tmp_path, gecko_url=url, progress=False)
            summary = await run_benchmark(Tau2Benchmark(config, options), options, llm=client)
            await client.aclose()
    assert summary.run_dir.name.endswith("_camel")
    simulation = Results.model_validate_json((summary.run_dir / "results.json").read_text()).simulations[0]
    assert simulation.reward_info is not None and simulation.reward_info.reward == 1.0
    rehearsal = simulation.info["gats"]["rehearsals"][0]["attempts"][0]
    assert [c["name"] for c in rehearsal["calls"]] == ["get_reservation_details", "cancel_reservation"]
    (task,) = [json.loads(line) for line in (summary.run_dir / "tasks.jsonl").read_text().splitlines()]
    providers = {(u["role"], u["provider"]) for u in task["usage"]}
    assert ("planner", "camel") in providers, providers  # the rehearsals' model calls were CAMEL's


def test_scripted_agents_refuse_an_agent_backend() -> None:
    with pytest.raises(ValueError, match="scripted agent"):
        Tau2RunConfig(domain="airline", agent_llm="scripted-oracle", agent_backend="camel")
