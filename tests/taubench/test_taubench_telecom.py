"""tau2 telecom, the dual-control domain: the carrier's and the phone's tools, the sync of the two sides, task set-up
functions, the ENV_ASSERTION reward, the oracle pair, the LLM user's tools, the mock toolkits and a CLI run.

Parity of every tool result and reward with the reference is `test_parity.py` (job v0/telecom, slow)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.taubench.agent_tools import load_catalog
from benchmarks.taubench.domains.telecom import TelecomTools
from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.evaluate import evaluate
from benchmarks.taubench.llm_chat import agent_view
from benchmarks.taubench.llm_user import LLMUser
from benchmarks.taubench.loader import DataStore
from benchmarks.taubench.messages import AssistantMessage, MessageToolCall, ToolMessage, UserMessage
from benchmarks.taubench.mock_toolkits import MOCK_DIR, build_openapi
from benchmarks.taubench.orchestrator import run_simulation, user_view
from benchmarks.taubench.results import TerminationReason
from benchmarks.taubench.scripted import ScriptedUser, gold_pair, noop_agent
from benchmarks.taubench.tasks import EnvAssertion, EnvFunctionCall, InitialState, Task
from gecko_cli.main import main as gecko_main
from tests.taubench._hybrid_support import rules_gecko, scripted_client
from utils.llm import LLMToolCall, RawReply

PHONE = "555-123-2002"
"""John Smith's line L1002 (customer C1001), the telecom tasks' usual customer."""


@pytest.fixture(scope="module")
def telecom(store: DataStore) -> DomainRuntime:
    return DomainRuntime("telecom", store, "v1")


@pytest.fixture(scope="module")
def tasks(store: DataStore) -> list[Task]:
    return store.tasks("telecom", "v1")


def _setup(*calls: tuple[str, str, dict[str, Any]]) -> InitialState:
    return InitialState(initialization_actions=[
        EnvFunctionCall(env_type=side, func_name=name, arguments=arguments) for side, name, arguments in calls
    ])


def test_data_tools_and_task_set(store: DataStore, telecom: DomainRuntime, tasks: list[Task]) -> None:
    assert len(tasks) == 114 and len(store.tasks("telecom", "v1", None)) == 2285
    assert len(telecom.tool_names()) == 13 and len(telecom.user_tool_names()) == 30
    assert telecom.is_write("refuel_data") and not telecom.is_write("get_data_usage")
    assert telecom.is_user_write("toggle_roaming") and not telecom.is_user_write("run_speed_test")
    assert not telecom.is_user_write("turn_roaming_off")  # a set-up function, not a tool the user is offered
    policy = telecom.policy
    assert policy.startswith("<main_policy>\n") and policy.endswith("\n</tech_support_policy>")
    assert "dual" not in store.user_guidelines() and store.user_guidelines_tools() != store.user_guidelines()


def test_set_up_user_tools_and_sync(telecom: DomainRuntime) -> None:
    env = telecom.environment(_setup(("user", "set_user_info", {"name": "John Smith", "phone_number": PHONE}),
                                     ("user", "set_user_location", {"abroad": True}),
                                     ("user", "turn_roaming_off", {}),
                                     ("assistant", "disable_roaming", {"customer_id": "C1001", "line_id": "L1002"})))
    assert env.user_db.surroundings.is_abroad and not env.user_db.surroundings.roaming_allowed
    speed = env.respond(MessageToolCall(id="1", name="run_speed_test", arguments={}, requestor="user"))
    assert (speed.content, speed.requestor) == ("Speed test failed: No Connection.", "user")
    assert env.execute("enable_roaming", {"customer_id": "C1001", "line_id": "L1002"}).content == (
        "Roaming enabled successfully")
    assert env.user_db.surroundings.roaming_allowed  # the agent's change reached the phone (sync)
    toggled = env.execute("toggle_roaming", {}, requestor="user").content
    assert toggled.startswith("Data Roaming is now ON.\nStatus Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled")
    assert env.execute("run_speed_test", {}, requestor="user").content.startswith("Speed Test Result: 275.00 Mbps")
    bad = env.execute("toggle_roaming", {"on": True}, requestor="user")
    assert bad.error and "TelecomUserTools.toggle_roaming() got an unexpected keyword argument 'on'" in bad.content
    assert env.execute("check_status_bar", {}).content == "Error: Tool 'check_status_bar' not found."
    fork = env.fork()  # set-up and both sides' writes replayed
    assert fork.user_db_hash() == env.user_db_hash() and fork.db_hash() == env.db_hash()


def test_payment_request_reaches_the_phone_and_paying_it_pays_the_bill(telecom: DomainRuntime) -> None:
    env = telecom.environment(_setup(("user", "set_user_info", {"name": "John Smith", "phone_number": PHONE})))
    tools = env.tools
    assert isinstance(tools, TelecomTools)
    customer = tools.get_customer_by_phone(PHONE)
    bill = customer.bill_ids[0]
    assert env.execute("make_payment", {}, requestor="user").content == "You do not have a payment request."
    assert not env.execute("send_payment_request", {"customer_id": customer.customer_id, "bill_id": bill}).error
    assert env.user_db.surroundings.payment_request.bill_id == bill
    assert env.execute("make_payment", {}, requestor="user").content.startswith("Payment of ")
    assert env.execute("get_details_by_id", {"id": bill}).json()["status"] == "Paid"
    assert env.user_db.surroundings.payment_request is None


def test_user_calls_fail_where_the_user_has_no_tools(airline: DomainRuntime) -> None:
    reply = airline.environment().respond(MessageToolCall(id="1", name="calculate", arguments={}, requestor="user"))
    assert reply.error and reply.content == "Error: User tools not available"


async def test_oracle_pair_scores_one_and_doing_nothing_fails(telecom: DomainRuntime, tasks: list[Task]) -> None:
    user_calls = 0
    for task in tasks:
        agent, user = gold_pair(task)
        run = await run_simulation(task, agent, user, telecom.environment(task.initial_state), infrastructure_errors=())
        reward = evaluate(telecom, task, run.messages, run.termination_reason)
        assert run.termination_reason == TerminationReason.USER_STOP and reward.reward == 1.0, task.id
        assert reward.env_assertions and all(check.met for check in reward.env_assertions)
        user_calls += sum(len(m.tool_calls or []) for m in run.messages if isinstance(m, UserMessage))
    assert user_calls > 300  # the user really played its side
    task = tasks[0]
    run = await run_simulation(task, noop_agent(), ScriptedUser.from_task(task), telecom.environment(task.initial_state),
                               infrastructure_errors=())
    reward = evaluate(telecom, task, run.messages, run.termination_reason)
    assert reward.reward == 0.0 and reward.reward_breakdown == {"ENV_ASSERTION": 0.0}


def test_an_assertion_that_raises_is_not_met(telecom: DomainRuntime, tasks: list[Task]) -> None:
    task = tasks[0].model_copy(deep=True)
    assert task.evaluation_criteria is not None
    task.evaluation_criteria.env_assertions = [EnvAssertion(env_type="user", func_name="assert_service_status",
                                                            arguments={"expected_status": "nonsense"})]
    reward = evaluate(telecom, task, [AssistantMessage(content="hi")], TerminationReason.USER_STOP)
    assert reward.reward == 0.0 and "assertion_errors" in (reward.info or {})["env"]


def test_the_agent_does_not_see_the_users_calls() -> None:
    history = [AssistantMessage(content="Please toggle data."),
               UserMessage(tool_calls=[MessageToolCall(id="u1", name="toggle_data", arguments={}, requestor="user")]),
               ToolMessage(id="u1", content="Mobile Data is now ON.", requestor="user"),
               UserMessage(content="Done.")]
    assert [m["role"] for m in agent_view(history)] == ["assistant", "user"]
    assert [m.content for m in user_view(history)] == ["Please toggle data.", "Done."]  # GATS's task text, too


async def test_llm_user_calls_its_own_tools(telecom: DomainRuntime, tasks: list[Task]) -> None:
    requests: list[dict[str, Any]] = []

    def step(request: dict[str, Any]) -> RawReply:
        requests.append(request)
        if not any(m["role"] == "tool" for m in request["messages"]):
            return RawReply(text=None, tool_calls=(LLMToolCall(id="t1", name="check_status_bar", arguments="{}"),))
        return RawReply(text="It says airplane mode. ###STOP###")

    client, _ = scripted_client([step, step])
    task = tasks[0]
    user = LLMUser(client, "openai-compatible:m@http://127.0.0.1:1/v1", "guidelines", task,
                   tools=load_catalog(telecom, side="user"))
    run = await run_simulation(task, noop_agent(), user, telecom.environment(task.initial_state),
                               infrastructure_errors=())
    call, result = run.messages[1], run.messages[2]
    assert isinstance(call, UserMessage) and call.tool_calls and call.tool_calls[0].requestor == "user"
    assert isinstance(result, ToolMessage) and result.content == "Status Bar: ✈️ Airplane Mode | 🔋 80%"
    assert {t["function"]["name"] for t in requests[0]["tools"]} == set(telecom.user_tool_names())
    assert [m["role"] for m in requests[1]["messages"]] == ["system", "user", "assistant", "tool"]
    assert run.termination_reason == TerminationReason.USER_STOP


@pytest.mark.parametrize("side", ["assistant", "user"])
def test_mock_toolkits_are_built_by_the_converter(telecom: DomainRuntime, side: str) -> None:
    document = build_openapi("telecom", "v1", telecom.store, side=side)
    operations = {op["operationId"]: op for path in document["paths"].values() for op in path.values()}
    names = telecom.user_tool_names() if side == "user" else telecom.tool_names()
    assert set(operations) == set(names)
    name = "telecom_user" if side == "user" else "telecom"
    assert json.loads((MOCK_DIR / f"{name}.json").read_text()) == json.loads(json.dumps(document))
    assert document["info"]["x-taubench"].get("side") == ("user" if side == "user" else None)


def test_offline_cli_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], tasks: list[Task]) -> None:
    ids = [tasks[0].id, tasks[-1].id]
    assert gecko_main(["tau2", "--domain", "telecom", "--task-ids", *ids, "--gats-mode", "none",
                       "--output-dir", str(tmp_path), "--no-progress"]) == 0
    (run_dir,) = tmp_path.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["evaluation"]["avg_reward"] == 1.0 and summary["evaluation"]["num_graded"] == 2
    capsys.readouterr()


@pytest.mark.integration
def test_offline_hybrid_run_rehearses_the_agents_side(tmp_path: Path, tasks: list[Task]) -> None:
    task = next(t for t in tasks if any(a.name == "refuel_data" for a in t.evaluation_criteria.actions or []))
    with rules_gecko(tmp_path / "state") as url:
        assert gecko_main(["tau2", "--domain", "telecom", "--task-ids", task.id, "--gecko-url", url,
                           "--output-dir", str(tmp_path / "out"), "--no-progress"]) == 0
    (run_dir,) = (tmp_path / "out").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["evaluation"]["avg_reward"] == 1.0
    (row,) = summary["tasks"]
    assert row["gats"]["mode"] == "hybrid" and row["gats"]["turns"] >= 1 and row["gats"]["simulated_calls"] >= 1
