"""The direct path for plain `tools/call` / `tools/list` over streamable HTTP (gecko.mcp.direct, issue 30.1).

It must write the bytes the SDK's transport writes, skip that transport, and leave every other request
(notifications, batches, odd shapes or headers, initialize) to the SDK, answered as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

import gecko.mcp.http as mcp_http
import gecko.sessions.service as session_service
from gecko.app import create_app
from gecko.mcp.direct import direct_request, headers_accepted
from tests.conftest import TOOLKITS_DIR
from tests.mcp.conftest import BAD_NOTE, BAD_NOTE_DETAIL, NOTE
from utils.settings import Settings

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
SESSION = "s-direct-equivalence"


def rpc(method: str, params: Any = None, request_id: Any = 1, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}
    if params is not None:
        message["params"] = params
    return message


def call(name: str, arguments: Any = None, request_id: Any = 1, **params: Any) -> dict[str, Any]:
    return rpc("tools/call", {"name": name, **({} if arguments is None else {"arguments": arguments}), **params},
               request_id)


@pytest.fixture
def sdk_calls(monkeypatch) -> Iterator[list[dict]]:
    """Every request the SDK's transport handles (a spy that delegates)."""
    seen: list[dict] = []
    original = StreamableHTTPSessionManager.handle_request

    async def spy(self, scope, receive, send):
        seen.append(scope)
        await original(self, scope, receive, send)

    monkeypatch.setattr(StreamableHTTPSessionManager, "handle_request", spy)
    yield seen


def _answer(client: TestClient, path: str, body: Any, direct: bool, monkeypatch) -> tuple[int, str, bytes]:
    """POST `body` in a fresh session named SESSION (so synthesis sees the same seed), directly or via the SDK."""
    with monkeypatch.context() as patch:
        patch.setattr(session_service, "new_session_id", lambda: SESSION)
        assert client.get("/session-id").json()["session_id"] == SESSION
        if not direct:
            patch.setattr(mcp_http, "direct_request", lambda message: None)
        reply = client.post(path, json=body, headers={**HEADERS, "X-Session-ID": SESSION})
    return reply.status_code, reply.headers["content-type"], reply.content


CASES = {
    "valid_write": ("/mcp/notes", call("create_note", {"title": "é ü \u2028 \"q\"", "body": "b", "tags": ["work"]})),
    "valid_read": ("/mcp/notes", call("get_note", {"note_id": "N-123"}, request_id="req-1")),
    "invalid": ("/mcp/notes", call("create_note", {"body": 1, "tags": ["UP", "UP"], "nope": True}, request_id=0)),
    "unknown_tool": ("/mcp/notes", call("create_nte", {"title": "t"}, request_id=-7)),
    "no_arguments": ("/mcp/notes", call("list_notes", None, request_id=2**70)),
    "null_arguments_and_meta": ("/mcp/notes", rpc("tools/call", {"name": "list_notes", "arguments": None,
                                                                 "_meta": {"progressToken": "p", "x": 1}})),
    "every_toolkit": ("/mcp", call("notes__get_note", {"note_id": "N-9"})),
    "list": ("/mcp/notes", rpc("tools/list")),
    "list_with_cursor": ("/mcp/notes", rpc("tools/list", {"cursor": "c"}, request_id="l")),
    "list_every_toolkit": ("/mcp", rpc("tools/list", {})),
}


@pytest.mark.parametrize("case", list(CASES))
def test_direct_answers_are_the_sdks_bytes(case, make_client, monkeypatch, sdk_calls):
    path, body = CASES[case]
    direct = _answer(make_client(), path, body, True, monkeypatch)
    assert not sdk_calls, "a plain request went through the SDK's transport"
    via_sdk = _answer(make_client(), path, body, False, monkeypatch)
    assert len(sdk_calls) == 1
    assert direct == via_sdk


def test_search_tools_and_a_session_less_call_match_the_sdk(make_client, monkeypatch):
    for path, body in (("/mcp", call("search_tools", {"query": "create a note", "k": 2})),
                       ("/mcp/notes", call("create_note", {"title": "t", "body": "b"}))):
        answers = []
        for direct in (True, False):
            client = make_client()
            with monkeypatch.context() as patch:
                if not direct:
                    patch.setattr(mcp_http, "direct_request", lambda message: None)
                answers.append(client.post(path, json=body, headers=HEADERS).content)
        assert answers[0] == answers[1]
    assert b"No Gecko session is bound" in answers[0]


def test_a_call_runs_the_pipeline_once_in_the_mapped_session(client, sdk_calls):
    sid = client.get("/session-id").json()["session_id"]
    reply = client.post("/mcp/notes", json=call("create_note", {"title": "t", "body": "b"}),
                        headers={**HEADERS, "Mcp-Session-Id": sid})
    assert reply.status_code == 200 and reply.json()["result"]["isError"] is False
    assert "mcp-session-id" not in reply.headers  # only initialize hands one out
    assert [c["tool"] for c in client.get(f"/sessions/{sid}/history").json()["calls"]] == ["notes/create_note"]
    assert client.get("/get-session-state", headers={"X-Session-ID": sid}).json()["version"] == 1
    assert client.post("/mcp/notes", json=rpc("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        headers=HEADERS).status_code == 200
    assert len(sdk_calls) == 1  # initialize, and nothing else, went to the SDK


FALL_THROUGH = {
    # name: (body, extra headers, status the SDK answers, whether the tool runs)
    "notification": ({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "get_note"}}, {}, 202, False),
    "batch": ([call("get_note", {"note_id": "a"}), call("get_note", {"note_id": "b"}, 2)], {}, 400, False),
    # an id the SDK's RequestId refuses makes the message a notification to it: accepted, and nothing runs
    "bool_id": (call("get_note", {"note_id": "a"}, request_id=True), {}, 202, False),
    "float_id": (call("get_note", {"note_id": "a"}, request_id=1.0), {}, 202, False),
    "null_id": (call("get_note", {"note_id": "a"}, request_id=None), {}, 202, False),
    "arguments_not_object": (call("get_note", ["a"]), {}, 200, False),
    "name_not_string": (rpc("tools/call", {"name": 5}), {}, 200, False),
    "bad_progress_token": (call("get_note", {"note_id": "a"}, _meta={"progressToken": [1]}), {}, 200, False),
    "task_augmented": (call("get_note", {"note_id": "a"}, task={"ttl": 1000}), {}, 200, None),
    "extra_member": (call("get_note", {"note_id": "a"}) | {"x": 1}, {}, 200, True),
    "ping": (rpc("ping"), {}, 200, False),
    "unsupported_version": (call("get_note", {"note_id": "a"}), {"MCP-Protocol-Version": "1999-01-01"}, 400, False),
    "not_accepting_json": (call("get_note", {"note_id": "a"}), {"Accept": "text/event-stream"}, 406, False),
    "form_content_type": (call("get_note", {"note_id": "a"}), {"Content-Type": "text/plain"}, 400, False),
}


@pytest.mark.parametrize("case", list(FALL_THROUGH))
def test_other_requests_go_to_the_sdk(case, client, sdk_calls):
    body, extra, status, runs = FALL_THROUGH[case]
    sid = client.get("/session-id").json()["session_id"]
    reply = client.post("/mcp/notes", json=body, headers={**HEADERS, "X-Session-ID": sid, **extra})
    assert len(sdk_calls) == 1 and reply.status_code == status, reply.text
    if status == 202:
        assert reply.content == b""  # a notification is accepted with no body (streamable HTTP)
    if runs is not None:
        calls = client.get(f"/sessions/{sid}/history").json()["calls"]
        assert len(calls) == (1 if runs else 0)


def test_the_shapes_and_headers_taken_directly():
    assert direct_request(call("t", {"a": None})) is not None
    assert direct_request(rpc("tools/list", None)) is not None
    for message in ([call("t")], call("t") | {"jsonrpc": "1.0"}, rpc("tools/list", {"cursor": 3}),
                    rpc("tools/list", []), rpc("initialize", {}), "tools/call", None):
        assert direct_request(message) is None, message
    json_post = [(b"content-type", b"application/json"), (b"accept", b"application/json")]
    assert headers_accepted(json_post)
    assert headers_accepted([*json_post, (b"content-type", b"text/plain")])  # the first one counts, as in the SDK
    assert not headers_accepted([(b"content-type", b"application/json"), (b"accept", b"*/*")])
    assert not headers_accepted([(b"content-type", b"application/jsonx"), (b"accept", b"application/json")])
    assert not headers_accepted([*json_post, (b"mcp-protocol-version", b"2099-01-01")])


def test_the_routes_guards_hold_for_direct_calls(make_client, sdk_calls):
    body = call("create_note", {"title": "t", "body": "x" * 4096})
    small = make_client(max_body_bytes=2048)
    assert small.post("/mcp/notes", json=body, headers=HEADERS).status_code == 413
    assert small.post("/mcp/notes", json=call("get_note", {"note_id": "a"}),
                      headers={**HEADERS, "Host": "evil.example"}).status_code == 421
    assert small.post("/mcp/notes", json=call("get_note", {"note_id": "a"}),
                      headers={**HEADERS, "Origin": "http://evil.example"}).status_code == 403
    keyed = make_client(api_key="s3cret")
    assert keyed.post("/mcp/notes", json=rpc("tools/list"), headers=HEADERS).status_code == 401
    listed = keyed.post("/mcp/notes", json=rpc("tools/list"), headers={**HEADERS, "Authorization": "Bearer s3cret"})
    assert listed.status_code == 200 and {t["name"] for t in listed.json()["result"]["tools"]} >= {"create_note"}
    assert not sdk_calls


async def test_the_official_sdk_client_is_answered_directly(tmp_path, sdk_calls):
    """The SDK's own client: its initialize goes to the SDK, its tools/list and tools/call are answered directly."""
    app = create_app(Settings(schemas_dirs=[TOOLKITS_DIR], workers=1, store="memory", state_dir=tmp_path,
                              search_cache_dir=tmp_path / "search", toolkit_cache_dir=tmp_path / "toolkits"))

    def factory(headers=None, timeout=None, auth=None) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), headers=headers, timeout=timeout, auth=auth)

    async with app.router.lifespan_context(app), \
            streamablehttp_client("http://127.0.0.1/mcp/notes", httpx_client_factory=factory) as (read, write, _), \
            ClientSession(read, write) as mcp:
        await mcp.initialize()
        assert {t.name for t in (await mcp.list_tools()).tools} == {"create_note", "get_note", "list_notes"}
        ok = await mcp.call_tool("create_note", NOTE)  # the client checks structuredContent against outputSchema
        assert ok.isError is False and ok.structuredContent["title"] == NOTE["title"]
        bad = await mcp.call_tool("create_note", BAD_NOTE)
        assert bad.isError is True and bad.content[0].text.startswith(BAD_NOTE_DETAIL)
        assert len(sdk_calls) == 2  # initialize and the initialized notification, nothing else
