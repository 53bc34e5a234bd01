from __future__ import annotations

import pytest

PROBLEM = "application/problem+json"
GOOD_NOTE = {"title": "Groceries", "body": "milk", "tags": ["food"], "priority": 2}


def test_valid_call_returns_schema_valid_200_and_updates_state(client, session):
    r = client.post("/notes/create_note", json=GOOD_NOTE, headers=session)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json()["title"] == "Groceries" and r.json()["status"] == "saved"
    assert r.headers["X-Gecko-State-Version"] == "1"
    state = client.get("/get-session-state", headers=session).json()
    assert state["version"] == 1
    note = r.json()
    # the record keeps the fields a note has (get_note's schema): what a later read returns
    assert state["state"]["notes"]["notes"] == {note["note_id"]: {"title": "Groceries", "body": "milk",
                                                                  "note_id": note["note_id"]}}
    assert state["state"]["counts"] == {"notes/create_note": 1}


def test_same_arguments_and_state_same_response_different_arguments_different_ids(client, session):
    a = client.post("/notes/create_note", json=GOOD_NOTE, headers=session).json()
    client.post("/set-session-state", json={"state": {}}, headers=session)  # back to the same (empty) state
    b = client.post("/notes/create_note", json=dict(reversed(list(GOOD_NOTE.items()))), headers=session).json()
    c = client.post("/notes/create_note", json={**GOOD_NOTE, "body": "eggs"}, headers=session).json()
    d = client.post("/notes/create_note", json=GOOD_NOTE, headers=session).json()
    assert a == b and a["note_id"] != c["note_id"]
    assert d["note_id"] not in (a["note_id"], c["note_id"])  # the same create again is a new record


def test_invalid_call_is_422_problem_json_with_every_violation(client, session):
    r = client.post("/notes/create_note", json={"body": 1, "priority": 0, "nope": True}, headers=session)
    assert r.status_code == 422 and r.headers["content-type"] == PROBLEM
    body = r.json()
    assert body["type"].endswith("invalid-arguments") and body["status"] == 422 and body["tool"] == "notes/create_note"
    pairs = {(e["pointer"], e["keyword"]) for e in body["errors"]}
    assert pairs == {("/title", "required"), ("/body", "type"), ("/priority", "minimum"),
                     ("/nope", "additionalProperties")}
    assert all(e["source"] == "syntactic" for e in body["errors"])
    assert "Missing required argument 'title'." in body["detail"]
    assert client.get("/get-session-state", headers=session).json()["version"] == 0


def test_reads_leave_state_unchanged(client, session):
    r = client.post("/notes/get_note", json={"note_id": "N-123"}, headers=session)
    assert r.status_code == 200 and r.json()["note_id"] == "N-123"
    assert client.get("/get-session-state", headers=session).json() == {"state": {}, "version": 0}


def test_document_routes_with_query_parameters(client, session):
    r = client.get("/list_notes?limit=3&notebook=work", headers=session)
    assert r.status_code == 200 and "notes" in r.json()
    r = client.get("/notes/list_notes?limit=-1", headers=session)
    assert r.status_code == 422 and r.json()["errors"][0]["pointer"] == "/limit"
    r = client.get("/accounts/5?verbose=true", headers=session)
    assert r.status_code == 200 and {"id", "nickname", "balance"} <= set(r.json())
    r = client.patch("/legacy30/accounts/5", json={"nickname": None}, headers=session)
    assert r.status_code == 200


@pytest.mark.parametrize(("method", "path", "status", "kind"), [
    ("post", "/notes/create_nte", 404, "unknown-tool"),
    ("post", "/nothing/at/all", 404, "unknown-tool"),
    ("delete", "/accounts/5", 405, "method-not-allowed"),
    ("put", "/list_notes", 405, "method-not-allowed"),
])
def test_routing_errors(client, session, method, path, status, kind):
    r = client.request(method, path, headers=session)
    assert r.status_code == status and r.headers["content-type"] == PROBLEM
    assert r.json()["type"].endswith(kind)


def test_unknown_tool_suggests_names(client, session):
    body = client.post("/notes/create_nte", json={}, headers=session).json()
    assert "create_note" in body["suggestions"] and "did you mean" in body["detail"]


def test_bad_input_is_never_500(client, session):
    cases = [
        (dict(content=b"{oops", headers={**session, "content-type": "application/json"}), 400),
        (dict(content=b"a=1", headers={**session, "content-type": "application/x-www-form-urlencoded"}), 415),
        (dict(json=[1, 2], headers=session), 422),
        (dict(json=GOOD_NOTE), 400),
        (dict(json=GOOD_NOTE, headers={"X-Session-ID": "missing"}), 404),
        (dict(content=b"\xff\xfe", headers={**session, "content-type": "application/json"}), 400),
    ]
    for kwargs, status in cases:
        r = client.post("/notes/create_note", **kwargs)
        assert r.status_code == status, (kwargs, r.text)
        assert r.headers["content-type"] == PROBLEM


def test_body_size_limit(make_client):
    small = make_client(max_body_bytes=200)
    sid = {"X-Session-ID": small.get("/session-id").json()["session_id"]}
    r = small.post("/notes/create_note", json={"title": "t", "body": "x" * 500}, headers=sid)
    assert r.status_code == 413 and r.headers["content-type"] == PROBLEM


def test_api_key(make_client):
    secured = make_client(api_key="s3cret")
    assert secured.get("/health").status_code == 200
    r = secured.get("/session-id")
    assert r.status_code == 401 and r.headers["content-type"] == PROBLEM
    assert secured.get("/session-id", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert secured.get("/session-id", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_session_toolkit_subset(client):
    sid = client.post("/sessions", json={"config": {"toolkits": ["legacy30"]}}).json()["session_id"]
    r = client.post("/notes/get_note", json={"note_id": "abc"}, headers={"X-Session-ID": sid})
    assert r.status_code == 404
    assert client.post("/sessions", json={"config": {"toolkits": ["nope"]}}).status_code == 422
    assert client.post("/sessions", json={"config": {"bogus": 1}}).status_code == 422


def test_state_model_none_keeps_state(make_client):
    c = make_client(state_model="none")
    sid = {"X-Session-ID": c.get("/session-id").json()["session_id"]}
    assert c.post("/notes/create_note", json=GOOD_NOTE, headers=sid).status_code == 200
    assert c.get("/get-session-state", headers=sid).json() == {"state": {}, "version": 0}
    assert c.get("/health").json()["state_model_enabled"] is False
