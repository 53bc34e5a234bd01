"""GATS hybrid mode against a real Gecko (rules engines): rehearsals with real reads and simulated writes,
real calls synced into the session, grading criteria never reaching GATS, infrastructure failures untested."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.taubench.agent_tools import load_catalog
from benchmarks.taubench.benchmark import INFRASTRUCTURE_ERRORS
from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.gats_hybrid import GatsAgent, HybridGats
from benchmarks.taubench.llm_agent import LLMAgent
from benchmarks.taubench.orchestrator import run_simulation
from benchmarks.taubench.participants import rollout_factory
from benchmarks.taubench.results import TerminationReason
from benchmarks.taubench.run_config import Tau2RunConfig
from benchmarks.taubench.scripted import ScriptedUser, oracle_agent
from benchmarks.taubench.tasks import Task
from gats import GatsConfig
from inference.gecko import GeckoClient, GeckoError
from tests.taubench._hybrid_support import (
    GENERIC,
    RecordingTransport,
    reading_agent_reply,
    rules_gecko,
    scripted_client,
)
from utils.llm import LLMInfrastructureError
from utils.procs import free_port

pytestmark = pytest.mark.integration
HYBRID = GatsConfig(max_retries=2, judge=True, generate_checklist=True)


@pytest.fixture(scope="module")
def gecko_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with rules_gecko(tmp_path_factory.mktemp("gecko-state")) as url:
        yield url


def _canary_task(airline: DomainRuntime, task_id: str = "19") -> Task:
    task = airline.store.task("airline", task_id)
    assert task.evaluation_criteria is not None
    task.evaluation_criteria.communicate_info = ["CANARY-communicate-7f3a"]
    task.evaluation_criteria.nl_assertions = ["CANARY-assertion-91bd"]
    return task


async def test_oracle_rehearses_with_real_reads_and_simulated_writes(gecko_url: str, airline: DomainRuntime) -> None:
    task = airline.store.task("airline", "19")  # get nothing, cancel Z7GOZK
    env = airline.environment()
    catalog = load_catalog(airline)
    config = Tau2RunConfig(domain="airline")
    async with GeckoClient(gecko_url) as gecko:
        gats = HybridGats(gecko, airline, catalog, env, rollout_factory(config, task, airline, None), HYBRID)
        agent = GatsAgent(oracle_agent(task), gats)
        run = await run_simulation(task, agent, ScriptedUser.from_task(task), env,
                                   infrastructure_errors=(LLMInfrastructureError, GeckoError))
        await gats.close()
    assert run.termination_reason == TerminationReason.USER_STOP
    record = gats.record()
    assert record["turns"] == 1 and record["simulated_calls"] == 1
    rehearsal = record["rehearsals"][0]
    assert rehearsal["attempts"][0]["calls"][0]["name"] == "cancel_reservation"
    assert rehearsal["status"] == "success" and rehearsal["checklist"]
    # the rehearsal's cancel was simulated: the real DB changed only through the real agent's call
    assert [w.name for w in env.writes] == ["cancel_reservation"]
    assert "SIMULATED, not done" in agent.references[0] and "non-authoritative" in agent.references[0]


async def test_real_calls_are_synced_and_criteria_never_reach_gats(gecko_url: str, airline: DomainRuntime) -> None:
    task = _canary_task(airline)
    env = airline.environment()
    catalog = load_catalog(airline)
    config = Tau2RunConfig(domain="airline", agent_llm=GENERIC)
    client, transport = scripted_client([reading_agent_reply("mia_li_3668")] * 40)
    recorder = RecordingTransport()
    async with GeckoClient(gecko_url, transport=recorder) as gecko:
        gats = HybridGats(gecko, airline, catalog, env, rollout_factory(config, task, airline, client), HYBRID)
        agent = GatsAgent(LLMAgent(client, GENERIC, airline.policy, catalog), gats)
        user = ScriptedUser(["I need help with my profile.", "Please check it again."])
        run = await run_simulation(task, agent, user, env, infrastructure_errors=(LLMInfrastructureError, GeckoError))
        await gats.close()
    assert run.termination_reason == TerminationReason.USER_STOP
    record = gats.record()
    assert record["turns"] == 2 and record["real_reads"] >= 2
    assert [t["synced_calls"] for t in record["rehearsals"]] == [0, 1]
    assert any("/update-state-from-real" in body and "mia_li_3668" in body for body in recorder.bodies)
    # the real agent saw the rehearsals as a last system message, never inside the graded conversation
    real_requests = [r for r in transport.requests if "simulated_rehearsals" in str(r["messages"][-1]["content"])]
    assert len(real_requests) == 2
    assert all("simulated_rehearsals" not in str(m.content) for m in run.messages)
    everything = "\n".join(recorder.bodies) + "\n".join(str(r) for r in transport.requests)
    assert "CANARY" not in everything
    assert "Mia" in everything  # the recording does hold the conversation (the check above can fail)


async def test_gecko_down_makes_the_run_untested(airline: DomainRuntime) -> None:
    task = airline.store.task("airline", "19")
    env = airline.environment()
    config = Tau2RunConfig(domain="airline")
    async with GeckoClient(f"http://127.0.0.1:{free_port()}", retries=0) as gecko:
        gats = HybridGats(gecko, airline, load_catalog(airline), env, rollout_factory(config, task, airline, None),
                          HYBRID)
        run = await run_simulation(task, GatsAgent(oracle_agent(task), gats), ScriptedUser.from_task(task), env,
                                   infrastructure_errors=INFRASTRUCTURE_ERRORS)
    assert run.termination_reason == TerminationReason.INFRASTRUCTURE_ERROR
    assert "Gecko" in (run.info or {}).get("error", "")
    assert env.writes == ()
