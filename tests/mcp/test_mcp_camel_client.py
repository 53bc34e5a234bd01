"""An agent framework's own MCP client against Gecko: CAMEL's `MCPToolkit` (unmodified `camel-ai`) over
streamable HTTP, with a CAMEL `ChatAgent` driven by our LLM stub."""

from __future__ import annotations

import pytest

from tests.infra import require_module
from tests.mcp.conftest import LiveGecko
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::UserWarning")]
GOOD = {"title": "groceries", "body": "eggs"}
BAD = {"title": "groceries", "body": "eggs", "priority": 9}
PLAN = {"match": "note via mcp", "steps": [
    {"tool_calls": [{"name": "create_note", "arguments": BAD}]},
    {"tool_calls": [{"name": "create_note", "arguments": GOOD}]},
    {"content": "Noted."}]}


async def test_camel_mcp_toolkit_lists_calls_and_reads_our_errors(mcp_gecko: LiveGecko):
    # camel imported here, not at collection (seconds of CPU for every run that collects this module)
    require_module("camel", "needs the [camel] extra (make setup installs it)")
    from camel.agents import ChatAgent
    from camel.toolkits import MCPToolkit

    from inference.integrations.camel import camel_model

    session_id = mcp_gecko.new_session()
    config = {"mcpServers": {"gecko": {"url": f"{mcp_gecko.url}/mcp/notes", "type": "streamable_http",
                                       "headers": {"X-Session-ID": session_id}}}}
    with run_stub(StubConfig(plans=[PLAN])) as stub:
        async with MCPToolkit(config_dict=config, skip_failed=False) as toolkit:
            tools = toolkit.get_tools()
            assert {t.get_function_name() for t in tools} == {"create_note", "get_note", "list_notes"}
            create = next(t for t in tools if t.get_function_name() == "create_note")
            parameters = create.get_openai_tool_schema()["function"]["parameters"]
            assert {"title", "body", "priority"} <= set(parameters["properties"])  # CAMEL makes them all required
            agent = ChatAgent(system_message="You take notes.", model=camel_model(stub.model("gecko-stub")),
                              tools=tools)
            response = await agent.astep("Please take a note via mcp: groceries, eggs")
    assert response.msgs[0].content == "Noted."
    results = [record.result for record in response.info["tool_calls"]]
    assert results[0] == "Argument 'priority' must be ≤ 5."
    assert '"status":"saved"' in results[1]
    assert [{k: n[k] for k in GOOD} for n in mcp_gecko.state(session_id)["notes"]["notes"].values()] == [GOOD]
    assert [c["status"] for c in mcp_gecko.history(session_id)] == [422, 200]
