"""CAMEL (the unmodified `camel-ai` from PyPI) against a real 2-worker Gecko, driven by our LLM stub.

Offline: no tokenizer download (the adapter's `ApproximateTokenCounter`), the model is the local stub.
"""

from __future__ import annotations

import socket
from types import ModuleType
from typing import Any

import pytest

from inference.agents import AgentInfrastructureError, AgentRequest
from inference.gecko import GeckoClient, GeckoToolBackend, fetch_catalog
from inference.tools import ToolExecutor
from tests.infra import require_module
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::UserWarning")]
MODEL = "gecko-stub"
GOOD = {"title": "groceries", "body": "eggs"}
BAD = {"title": "groceries", "priority": 9}
PLAN = {"match": "take a note", "steps": [
    {"tool_calls": [{"name": "create_note", "arguments": BAD}]},
    {"tool_calls": [{"name": "create_note", "arguments": GOOD}]},
    {"content": "Saved your note."}]}


@pytest.fixture(scope="module")
def cam() -> ModuleType:
    """Our CAMEL adapter (and through it camel's ChatAgent and FunctionTool), imported here, not at collection:
    camel-ai takes seconds to import."""
    return require_module("inference.integrations.camel", "CAMEL tests need the [camel] extra (make setup installs it)")


@pytest.fixture(scope="module")
def stub():
    with run_stub(StubConfig(plans=[PLAN])) as handle:
        yield handle


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Anything that tries to reach the internet (a tokenizer download) fails the test at once."""
    real_connect = socket.socket.connect

    def loopback_only(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "localhost", "::1") and not host.startswith("/"):
            raise OSError(f"test is offline: connection to {host} refused")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)


def test_the_model_name_camel_reserves_is_refused(cam, stub):
    with pytest.raises(ValueError, match="CAMEL answers the model name 'stub'"):
        cam.camel_model(stub.model("stub"))


def test_token_counter_needs_no_files(cam):
    counter = cam.ApproximateTokenCounter()
    text = "Gecko simulates tools — ünïcode too"
    assert counter.decode(counter.encode(text)) == text
    assert counter.count_tokens_from_messages([{"role": "user", "content": "x" * 40}]) == 14


async def test_function_tools_carry_schema_and_session_and_return_problems(cam, live_gecko):
    async with GeckoClient(live_gecko) as client:
        session = await client.new_session_id()
        tools = await cam.gecko_function_tools(client, session, ["notes"])
        by_name = {t.get_function_name(): t for t in tools}
        assert set(by_name) >= {"notes__create_note", "notes__get_note"} or set(by_name) >= {"create_note"}
        create = next(t for name, t in by_name.items() if name.endswith("create_note"))
        assert isinstance(create, cam.FunctionTool)
        assert create.get_openai_tool_schema()["function"]["parameters"]["required"] == ["title", "body"]
        bad = await create.async_call(**BAD)
        assert "Missing required argument 'body'." in bad and "Argument 'priority' must be ≤ 5." in bad
        ok = await create.async_call(**GOOD)
        assert '"status":"saved"' in ok
        state = await client.get_session_state(session)
    assert [{k: n[k] for k in GOOD} for n in state.state["notes"]["notes"].values()] == [GOOD]


async def test_chat_agent_with_gecko_tools_fixes_its_call_from_the_problem(cam, live_gecko, stub):
    """A plain CAMEL ChatAgent (stub model) with Gecko's tools: invalid call, our message, valid call."""
    async with GeckoClient(live_gecko) as client:
        session = await client.new_session_id()
        tools = await cam.gecko_function_tools(client, session, ["notes"])
        agent = cam.ChatAgent(system_message="You take notes.", model=cam.camel_model(stub.model(MODEL)), tools=tools)
        response = await agent.astep("Please take a note: groceries, eggs")
        assert response.msgs[0].content == "Saved your note."
        results = [record.result for record in response.info["tool_calls"]]
        assert "Missing required argument 'body'." in results[0] and '"status":"saved"' in results[1]
        state = await client.get_session_state(session)
        history = await client.history(session)
    assert [{k: n[k] for k in GOOD} for n in state.state["notes"]["notes"].values()] == [GOOD]
    assert [c["status"] for c in history] == [422, 200]


async def test_camel_agent_backend_runs_like_the_planner(cam, live_gecko, stub):
    async with GeckoClient(live_gecko) as client:
        session = await client.new_session_id()
        executor = ToolExecutor(await fetch_catalog(client, ["notes"]), GeckoToolBackend(client, session))
        built: list[Any] = []

        class MyChatAgent(cam.ChatAgent):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                built.append(self)

        agent = cam.CamelAgent(stub.model(MODEL), max_steps=5, chat_agent=MyChatAgent)
        run = await agent.run(AgentRequest(({"role": "user", "content": "Please take a note: groceries"},)), executor)
    assert len(built) == 1, "the user's own ChatAgent subclass ran the turn"
    assert run.final_text == "Saved your note." and run.stop_reason == "answer"
    assert [c.outcome.status for c in run.calls] == [422, 200]
    assert run.calls[0].outcome.error_kind == "invalid_arguments"
    assert run.usage and run.usage[0]["role"] == "planner" and run.usage[0]["input_tokens"] > 0


async def test_camel_agent_reports_a_dead_gecko_as_infrastructure(cam, stub):
    from inference.tools import ToolCatalog
    from utils.procs import free_port

    catalog = ToolCatalog.from_toolkits([{"name": "notes", "tools": [
        {"name": "create_note", "arguments_schema": {"type": "object", "properties": {"title": {"type": "string"}}}}]}])
    async with GeckoClient(f"http://127.0.0.1:{free_port()}", retries=0) as client:
        executor = ToolExecutor(catalog, GeckoToolBackend(client, "s"))
        with pytest.raises(AgentInfrastructureError) as failed:
            await cam.CamelAgent(stub.model(MODEL)).run(AgentRequest(({"role": "user", "content": "note"},)), executor)
    assert "tool backend failed" in str(failed.value)
