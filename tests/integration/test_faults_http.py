"""The state controller on a real Gecko (uvicorn, 2 workers, SQLite, 127.0.0.1), driven over HTTP by the Gecko
client and over MCP by the official SDK client: decisions identical across workers and replays, and identical to
the same policy on a real-tool bridge (`FaultyBackend`); the server-wide `--faults FILE`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from inference.gecko import GeckoClient
from inference.gecko.backend import GeckoToolBackend, fetch_catalog
from inference.tools import ToolOutcome
from inference.tools.faults import FaultyBackend
from tests.conftest import TOOLKITS_DIR
from utils.faults import parse_policy
from utils.procs import gecko_server

pytestmark = pytest.mark.integration

POLICY = {"name": "mixed", "seed": 4, "rules": [
    {"name": "net", "when": {"probability": 0.25}, "do": {"kind": "unavailable", "retry_after": 0}},
    {"name": "quota", "when": {"access": "write", "every": 4}, "do": {"kind": "rate_limit", "retry_after": 0}},
    {"name": "damage", "when": {"probability": 0.15}, "do": {"kind": "corrupt", "mode": "drop_field"}},
    {"name": "goal", "when": {"after_writes": 2}, "do": {"kind": "constraint", "text": "Also tag it."}, "limit": 1},
]}


def _calls(n: int) -> list[tuple[str, dict[str, Any]]]:
    return [("create_note", {"title": f"n{i}", "body": "b"}) if i % 3 else ("list_notes", {}) for i in range(n)]


async def _through_gecko(client: GeckoClient, policy: dict | None = None) -> tuple[str, list[ToolOutcome]]:
    catalog = await fetch_catalog(client, ["notes"])
    session = await client.create_session({"faults": policy} if policy else {})
    backend = GeckoToolBackend(client, session.session_id)
    outcomes = [await backend.execute(catalog.resolve(name), args) for name, args in _calls(24)]
    return session.session_id, outcomes


def _decisions(outcomes: list[ToolOutcome]) -> list[tuple[int, str, str] | None]:
    return [None if o.fault is None else (o.fault["call"], o.fault["rule"], o.fault["kind"]) for o in outcomes]


class _Echo:
    """A stand-in real tool that always succeeds (the bridge side of the comparison)."""

    async def execute(self, tool, arguments, message=None) -> ToolOutcome:
        body = {"tool": tool.operation_id, **arguments}
        return ToolOutcome(True, json.dumps(body), body=body)


async def test_decisions_replay_across_workers_and_match_a_real_tool_bridge(live_gecko: str) -> None:
    async with GeckoClient(live_gecko, max_connections=1) as client:  # fresh connections spread over both workers
        first_sid, first = await _through_gecko(client, POLICY)
        _, second = await _through_gecko(client, POLICY)
        history = await client.full_history(first_sid)
        catalog = await fetch_catalog(client, ["notes"])
        controller = await client.faults(first_sid)
    decisions = _decisions(first)
    assert decisions == _decisions(second)  # an exact replay
    assert {d[2] for d in decisions if d} >= {"unavailable", "rate_limit", "constraint"}
    assert [e.get("fault") for e in history] == [o.fault for o in first]  # every injection is in the history
    assert controller["injected"]["total"] == sum(d is not None for d in decisions)
    assert controller["state"]["calls"] == 24 and controller["source"] == "session"
    for outcome in first:
        if outcome.fault and outcome.fault["kind"] in ("unavailable", "rate_limit"):
            assert outcome.error_kind == "service_error" and json.loads(outcome.content)["status"] in (429, 503)

    bridge = FaultyBackend(_Echo(), parse_policy(POLICY), side="simulated")
    bridged = [await bridge.execute(catalog.resolve(name), args) for name, args in _calls(24)]
    # one engine on both sides: the same rule at the same call (writes count the same where both succeed)
    assert _decisions(bridged) == decisions
    assert [o.content for o in bridged if o.blocked_by_fault] == [o.content for o in first if o.blocked_by_fault]


async def test_policy_endpoints_and_forks_through_the_client(live_gecko: str) -> None:
    async with GeckoClient(live_gecko) as client:
        session = await client.create_session()
        one = {"rules": [{"name": "down", "when": {"calls": [1]}, "do": {"kind": "server_error"}}]}
        assert (await client.set_faults(session.session_id, one))["source"] == "session"
        inherited = await client.fork(session.session_id)
        replaced = await client.fork(session.session_id, faults=None)
        assert (await client.faults(inherited.session_id))["policy"]["rules"][0]["name"] == "down"
        assert (await client.faults(replaced.session_id))["source"] == "none"
        response = await client.call_tool(inherited.session_id, "notes", "list_notes", {})
        assert response.status == 500 and response.fault["kind"] == "server_error"  # a tool result, not raised
        assert (await client.set_faults(session.session_id, None))["source"] == "none"
        with pytest.raises(Exception, match="rules"):
            await client.set_faults(session.session_id, {"rules": [{"name": "x", "do": {"kind": "nope"}}]})


async def test_mcp_clients_see_injected_errors_notices_and_the_record(live_gecko: str) -> None:
    policy = {"rules": [{"name": "busy", "when": {"calls": [1]}, "do": {"kind": "rate_limit", "retry_after": 1}},
                        {"name": "goal", "when": {"calls": [2]}, "do": {"kind": "constraint", "text": "Tag it."}}]}
    async with streamablehttp_client(f"{live_gecko}/mcp/notes") as (read, write, session_id):
        async with ClientSession(read, write) as mcp:
            await mcp.initialize()
            httpx.put(f"{live_gecko}/sessions/{session_id()}/faults", json=policy, timeout=10).raise_for_status()
            limited = await mcp.call_tool("create_note", {"title": "t", "body": "b"})
            assert limited.isError and limited.content[0].text.startswith("Too Many Requests")
            assert limited.meta["gecko/fault"]["rule"] == "busy" and limited.meta["gecko/problem"]["status"] == 429
            noticed = await mcp.call_tool("create_note", {"title": "t", "body": "b"})
            assert not noticed.isError and noticed.structuredContent["status"] == "saved"
            assert "_notice" not in noticed.structuredContent  # the result still fits the output schema
            assert noticed.content[-1].text == "Notice from the user: Tag it."
            assert noticed.meta["gecko/fault"]["checklist_item"] == "constraint-1"


def test_server_wide_policy_file(tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("name: every-other\nrules:\n  - name: odd\n    when: {every: 2}\n"
                           "    do: {kind: unavailable, retry_after: 0}\n")
    with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path, extra=["--faults", str(policy_file)]) as url:
        with httpx.Client(base_url=url, timeout=10) as http:
            sid = http.post("/sessions", json={}).json()["session_id"]
            statuses = [http.post("/notes/list_notes", headers={"X-Session-ID": sid}).status_code for _ in range(4)]
            assert statuses == [200, 503, 200, 503]
            assert http.get(f"/sessions/{sid}/faults").json()["source"] == "server"
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [{name: x, do: {kind: delay}}]\n")
    with pytest.raises(RuntimeError), gecko_server([TOOLKITS_DIR], workers=1, state_dir=tmp_path,
                                                   extra=["--faults", str(bad)], timeout=20):
        pass
