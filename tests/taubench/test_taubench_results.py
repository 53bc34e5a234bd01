"""Run outputs: the official results.json shape, JSON round trips, and the mock toolkits."""

from __future__ import annotations

import json

import pytest

from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.evaluate import evaluate
from benchmarks.taubench.orchestrator import run_simulation
from benchmarks.taubench.results import AgentInfo, EnvironmentInfo, Info, Results, UserInfo
from benchmarks.taubench.scripted import ScriptedUser, oracle_agent
from benchmarks.taubench.tasks import render_user_scenario


async def test_results_round_trip_in_the_official_shape(airline: DomainRuntime) -> None:
    task = airline.store.task("airline", "5", "v1")
    run = await run_simulation(task, oracle_agent(task), ScriptedUser.from_task(task), airline.environment())
    run.reward_info = evaluate(airline, task, run.messages, run.termination_reason)
    results = Results(
        info=Info(
            git_commit="abc", num_trials=1, max_steps=200, max_errors=10,
            user_info=UserInfo(implementation="scripted_user"), agent_info=AgentInfo(implementation="oracle"),
            environment_info=EnvironmentInfo(domain_name="airline", policy=airline.policy),
            seed=300, data_version=airline.store.data_version("airline"),
        ),
        tasks=[task],
        simulations=[run],
    )
    data = json.loads(results.model_dump_json())
    assert set(data) == {"timestamp", "info", "tasks", "simulations"}
    simulation = data["simulations"][0]
    assert {"id", "task_id", "start_time", "end_time", "duration", "termination_reason", "reward_info", "messages",
            "trial", "seed", "agent_cost", "user_cost"} <= set(simulation)
    assert simulation["termination_reason"] == "user_stop"
    assert simulation["reward_info"]["reward_breakdown"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    tool = next(m for m in simulation["messages"] if m["role"] == "tool")
    assert set(tool) >= {"id", "role", "content", "requestor", "error", "turn_idx", "timestamp"}
    call = next(m for m in simulation["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert set(call) == {"id", "name", "arguments", "requestor"}
    assert Results.model_validate_json(results.model_dump_json()) == results
    assert data["tasks"][0]["evaluation_criteria"]["reward_basis"] == ["DB", "COMMUNICATE"]


def test_user_scenario_rendering(airline: DomainRuntime) -> None:
    text = render_user_scenario(airline.store.task("airline", "1", "v1").user_scenario)
    assert text.startswith("Instructions:\n\tDomain: airline\n\tReason for call:\n\t\t")
    assert "\n\tKnown info:\n\t\tYou are Raj Sanchez.\n\t\tYour user id is raj_sanchez_7340." in text
    assert "Unknown info" not in text


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_mock_toolkits_are_built_by_the_converter(domain: str, runtimes: dict[tuple[str, str], DomainRuntime]) -> None:
    from benchmarks.taubench.mock_toolkits import MOCK_DIR, build_openapi

    runtime = runtimes[("v1", domain)]
    document = build_openapi(domain, "v1", runtime.store)
    operations = {op["operationId"]: op for path in document["paths"].values() for op in path.values()}
    assert set(operations) == set(runtime.tool_names())
    assert all(op["x-gecko-access"] == runtime.kind(name) for name, op in operations.items())
    assert all("200" in op["responses"] for op in operations.values())
    assert (MOCK_DIR / f"{domain}.json").exists(), "run: python -m benchmarks.taubench.mock_toolkits"
    assert json.loads((MOCK_DIR / f"{domain}.json").read_text()) == json.loads(json.dumps(document))
