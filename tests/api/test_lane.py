"""The tool route's short lane (`gecko.api.lane.GeckoApp`): it answers exactly what the framework's full stack
answers (status, body, Gecko's headers), takes only the requests the router would give the tool route, and is the
path those requests really take."""

from __future__ import annotations

import pytest

from gecko.api.lane import GeckoApp

KEY = "s3cret-key-for-the-lane"
MCP = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SKIPPED_HEADERS = {"x-request-id", "date", "server"}


def _full_stack(monkeypatch: pytest.MonkeyPatch, app: GeckoApp) -> None:
    """From now on every request of `app` goes through the framework (the lane never matches)."""
    monkeypatch.setattr(app, "_lane_match", lambda scope: (None, {}))


def _answer(reply) -> tuple[int, object, dict[str, str]]:
    body = reply.json() if reply.content else None
    headers = {k: v for k, v in reply.headers.items() if k not in SKIPPED_HEADERS}
    return reply.status_code, body, headers


REQUESTS = [
    ("valid write", "/notes/create_note", {"json": {"title": "t", "body": "b", "tags": ["work"]}}),
    ("valid read", "/notes/get_note", {"json": {"note_id": "N-1"}}),
    ("invalid arguments", "/notes/create_note", {"json": {"body": 1, "tags": ["UP", "UP"], "nope": True}}),
    ("arguments not an object", "/notes/create_note", {"json": [1, 2]}),
    ("unknown tool", "/notes/no_such_tool", {"json": {}}),
    ("unknown toolkit", "/nopes/create_note", {"json": {}}),
    ("malformed JSON", "/notes/create_note", {"content": b"{", "headers": {"Content-Type": "application/json"}}),
    ("not JSON", "/notes/create_note", {"content": b"title=t", "headers": {"Content-Type": "text/plain"}}),
    ("no session", "/notes/get_note", {"json": {"note_id": "N-1"}, "session": False}),
    ("unknown session", "/notes/get_note", {"json": {"note_id": "N-1"}, "session": "nope"}),
    ("MCP call", "/mcp/notes", {"json": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "get_note", "arguments": {"note_id": "N-1"}}}, "headers": MCP}),
    ("MCP invalid call", "/mcp/notes", {"json": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "create_note", "arguments": {"body": 1}}}, "headers": MCP}),
    ("MCP list", "/mcp", {"json": {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, "headers": MCP}),
    ("MCP unknown toolkit", "/mcp/nopes", {"json": {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
                                           "headers": MCP}),
    ("MCP not JSON", "/mcp/notes", {"content": b"{", "headers": MCP}),
]


@pytest.mark.parametrize("api_key", [None, KEY])
def test_the_lane_answers_what_the_full_stack_answers(make_client, monkeypatch: pytest.MonkeyPatch,
                                                       api_key: str | None):
    client = make_client(api_key=api_key)
    app = client.app
    assert isinstance(app, GeckoApp)
    auth = {"Authorization": f"Bearer {KEY}"} if api_key else {}

    def send(path: str, options: dict) -> tuple[int, object, dict[str, str]]:
        options = dict(options)
        session = options.pop("session", True)
        headers = {**auth, **options.pop("headers", {})}
        if session is True:
            headers["X-Session-ID"] = client.get("/session-id", headers=auth).json()["session_id"]
        elif session:
            headers["X-Session-ID"] = session
        status, body, got = _answer(client.post(path, headers=headers, **options))
        got.pop("x-session-id", None)  # a new session per send: its id and the values drawn for it differ
        if status < 300 and isinstance(body, dict):  # the keys, and for MCP whether the call failed
            result = body.get("result")
            body = (sorted(body), result.get("isError") if isinstance(result, dict) else None)
            got.pop("content-length")
        return status, body, got

    lane = [send(path, options) for _, path, options in REQUESTS]
    assert app._lane is not None  # the requests above took it
    if api_key:
        lane.append(_answer(client.post("/notes/get_note", json={"note_id": "N-1"})))  # no key: 401
    _full_stack(monkeypatch, app)
    full = [send(path, options) for _, path, options in REQUESTS]
    if api_key:
        full.append(_answer(client.post("/notes/get_note", json={"note_id": "N-1"})))
    for (name, _, _), got, want in zip(REQUESTS, lane, full):
        assert got == want, name
    assert lane[-1] == full[-1]
    statuses = [answer[0] for answer in lane]
    assert statuses[:2] == [200, 200] and 422 in statuses and 404 in statuses and 415 in statuses


def test_the_lane_takes_only_what_the_router_gives_the_tool_route(make_client, monkeypatch: pytest.MonkeyPatch):
    client = make_client()
    app = client.app
    taken: list[str] = []
    endpoint = app._endpoint

    async def recording(scope, receive, send):
        taken.append(f"{scope['method']} {scope['path']}")
        await endpoint(scope, receive, send)

    monkeypatch.setattr(app, "_endpoint", recording)
    session = {"X-Session-ID": client.get("/session-id").json()["session_id"]}
    assert client.post("/notes/get_note", json={"note_id": "N-1"}, headers=session).status_code == 200
    client.post("/ui/login", data={"key": "x"})  # the viewer's, same shape
    client.post("/mcp/notes", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream"})  # MCP's, same shape: its own endpoint
    client.get("/notes/get_note")  # another method: the document-path fallback answers it
    client.post("/notes/get_note/extra", json={})  # three segments
    client.post("/set-session-state", json={"state": {}}, headers=session)
    assert taken == ["POST /notes/get_note", "POST /mcp/notes"]
    assert [type(route).__name__ for route in app._lane_routes] == ["Route", "Route", "ToolCallRoute"]


def test_a_failure_inside_the_lane_is_the_handlers_500(make_client, monkeypatch: pytest.MonkeyPatch):
    client = make_client()
    app = client.app

    async def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(client.app.state.gecko.runner, "run", broken)
    session = {"X-Session-ID": client.get("/session-id").json()["session_id"]}
    reply = client.post("/notes/get_note", json={"note_id": "N-1"}, headers=session)
    assert app._lane is not None
    assert reply.status_code == 500 and reply.json()["type"].endswith("internal-error")
    assert "boom" not in reply.text and reply.headers["x-request-id"]
