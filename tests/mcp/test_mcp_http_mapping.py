"""The HTTP side of Gecko's MCP endpoint in-process: session mapping, modes, refusals, security."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from gecko.app import create_app
from tests.conftest import TOOLKITS_DIR
from utils.settings import Settings

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}


def call(name: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


@pytest.fixture
def app_client(tmp_path):
    def make(**overrides) -> TestClient:
        settings = Settings(schemas_dirs=[TOOLKITS_DIR], workers=1, store="memory", state_dir=tmp_path, **overrides)
        return TestClient(create_app(settings), base_url="http://127.0.0.1:8000")
    return make


def test_initialize_creates_a_session_in_the_requested_mode(app_client):
    with app_client() as client:
        reply = client.post("/mcp/notes?mode=hybrid", json=INIT, headers=HEADERS)
        assert reply.status_code == 200 and reply.json()["result"]["serverInfo"]["name"] == "gecko"
        session = client.get(f"/sessions/{reply.headers['mcp-session-id']}").json()
        assert session["config"]["mode"] == "hybrid" and session["config"]["labels"]["transport"] == "mcp"
        assert client.post("/mcp/notes?mode=live", json=INIT, headers=HEADERS).status_code == 400


def test_calls_need_a_session_and_ids_must_agree(app_client):
    with app_client() as client:
        unbound = client.post("/mcp/notes", json=call("create_note", {"title": "t", "body": "b"}), headers=HEADERS)
        assert unbound.json()["result"]["isError"] is True
        assert "No Gecko session is bound" in unbound.json()["result"]["content"][0]["text"]
        sid = client.get("/session-id").json()["session_id"]
        by_query = client.post(f"/mcp/notes?session={sid}", json=call("create_note", {"title": "t", "body": "b"}),
                               headers=HEADERS)
        assert by_query.json()["result"]["isError"] is False
        assert client.get("/get-session-state", headers={"X-Session-ID": sid}).json()["version"] == 1
        clash = client.post("/mcp/notes", json=call("get_note", {"note_id": "abc"}),
                            headers={**HEADERS, "Mcp-Session-Id": sid, "X-Session-ID": "other"})
        assert clash.status_code == 400
        gone = client.post("/mcp/notes", json=call("get_note", {"note_id": "abc"}),
                           headers={**HEADERS, "Mcp-Session-Id": "expired-session"})
        assert gone.json()["result"]["isError"] is True and "does not exist any more" in gone.text


def test_size_host_and_key_are_enforced(app_client):
    with app_client(max_body_bytes=2048) as client:
        big = call("create_note", {"title": "t", "body": "x" * 4096})
        assert client.post("/mcp/notes", json=big, headers=HEADERS).status_code == 413
        rebinding = client.post("/mcp/notes", json=INIT, headers={**HEADERS, "Host": "evil.example"})
        assert rebinding.status_code in (400, 403, 421)
    with app_client(api_key="s3cret") as client:
        assert client.post("/mcp/notes", json=INIT, headers=HEADERS).status_code == 401
        ok = client.post("/mcp/notes", json=INIT, headers={**HEADERS, "Authorization": "Bearer s3cret"})
        assert ok.status_code == 200


def test_json_limits_hold_before_the_sdk_parses(app_client):
    with app_client() as client:
        sid = client.get("/session-id").json()["session_id"]
        headers = {**HEADERS, "X-Session-ID": sid}
        deep = '{"a":' * 300 + "1" + "}" * 300
        text = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_note","arguments":' \
               '{"title":"t","body":"b","z":' + deep + "}}}"
        refused = client.post("/mcp/notes", content=text, headers={**headers, "Content-Type": "application/json"})
        assert refused.status_code == 413 and "--max-json-depth" in refused.json()["error"]["message"]
        many = client.post("/mcp/notes", json=call("create_note", {"title": "t", "body": "b", "z": [0] * 20_000}),
                           headers=headers)
        assert many.status_code == 413 and "--max-array-items" in many.json()["error"]["message"]
        lone = text.replace(deep, '"\\ud800"')
        surrogate = client.post("/mcp/notes", content=lone, headers={**headers, "Content-Type": "application/json"})
        assert surrogate.status_code == 422 and "surrogate" in surrogate.json()["error"]["message"]
        assert client.get(f"/sessions/{sid}/history").status_code == 200
        assert client.get("/get-session-state", headers={"X-Session-ID": sid}).json()["version"] == 0
        fine = client.post("/mcp/notes", json=call("create_note", {"title": "t", "body": "b"}), headers=headers)
        assert fine.status_code == 200 and fine.json()["result"]["isError"] is False
        garbled = client.post("/mcp/notes", content=b"{not json", headers={**headers, "Content-Type": "application/json"})
        assert garbled.status_code == 400 and garbled.json()["error"]["code"] == -32700  # the SDK's parse error
