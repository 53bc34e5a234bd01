"""The read-only session views over HTTP: `GET /sessions`, `/sessions/{id}/tree`, `/sessions/{id}/diff`, the fork
body, the judge's `#judge` history entry and the viewer's read-only cookie."""

from __future__ import annotations

from fastapi.testclient import TestClient

from gecko.api.security import UI_COOKIE, ui_token

NOTE = {"title": "Buy milk", "body": "2 liters"}


def _session(client: TestClient, **labels: str) -> str:
    reply = client.post("/sessions", json={"config": {"toolkits": ["notes"], "labels": labels}})
    assert reply.status_code == 201
    return reply.json()["session_id"]


def _call(client: TestClient, session_id: str, arguments: dict) -> int:
    return client.post("/notes/create_note", json=arguments, headers={"X-Session-ID": session_id}).status_code


def test_a_gats_turn_as_a_tree_with_verdicts_and_notes(client: TestClient) -> None:
    base = _session(client, run="r1", task="t1")
    assert _call(client, base, NOTE) == 200
    first = client.post(f"/sessions/{base}/fork", json={"labels": {"attempt": "0"}}).json()
    assert first["config"]["labels"] == {"run": "r1", "task": "t1", "attempt": "0"}
    assert first["config"]["forked_from"] == base and first["config"]["fork_version"] == 1
    assert _call(client, first["session_id"], {"title": "", "body": "x"}) == 422
    client.post(f"/sessions/{first['session_id']}/judge", json={"task": "Note it", "agent_response": "Done"})
    second = client.post(f"/sessions/{base}/fork", json={"labels": {"attempt": "1"}, "note": "REJECTED: title"}).json()
    assert _call(client, second["session_id"], NOTE) == 200
    client.post(f"/sessions/{second['session_id']}/judge", json={"task": "Note it", "agent_response": "Done"})

    tree = client.get(f"/sessions/{second['session_id']}/tree").json()
    assert tree["path"] == [base, second["session_id"]] and tree["root"]["session_id"] == base
    children = tree["root"]["children"]
    assert [c["labels"]["attempt"] for c in children] == ["0", "1"]
    assert [c["status"] for c in children] == ["failed", "success"]
    assert children[0]["verdict"]["success"] is False and children[1]["verdict"]["success"] is True
    assert children[1]["note"] == "REJECTED: title" and children[0]["note"] is None
    history = client.get(f"/sessions/{second['session_id']}/history").json()["calls"]
    assert history[-1]["tool"] == "#judge" and history[-1]["verdict"]["items"][0]["status"] == "success"


def test_fork_body_is_checked(client: TestClient) -> None:
    base = _session(client)
    reply = client.post(f"/sessions/{base}/fork", json={"labels": {"a": "1"}, "colour": "red"})
    assert reply.status_code == 422 and "colour" in reply.text
    assert client.post(f"/sessions/{base}/fork").status_code == 201  # the body stays optional


def test_listing_filters_and_keyset_pages(client: TestClient) -> None:
    ids = [_session(client, run="a" if i % 2 else "b") for i in range(7)]
    assert _call(client, ids[0], {"title": "", "body": "x"}) == 422
    listed = client.get("/sessions", params={"label": "run=a", "limit": 2}).json()
    assert [s["session_id"] for s in listed["sessions"]] == [ids[5], ids[3]] and listed["total"] == 3
    following = client.get("/sessions", params={"label": "run=a", "limit": 2, "cursor": listed["next_cursor"]}).json()
    assert [s["session_id"] for s in following["sessions"]] == [ids[1]] and following["next_cursor"] is None
    rejected = client.get("/sessions", params={"status": "rejected"}).json()["sessions"]
    assert [s["session_id"] for s in rejected] == [ids[0]]
    assert client.get("/sessions", params={"toolkit": "legacy30"}).json()["sessions"] == []
    for bad in ({"label": "run"}, {"status": "great"}, {"cursor": "not-a-cursor"}):
        reply = client.get("/sessions", params=bad)
        assert reply.status_code == 422 and reply.json()["detail"], bad


def test_diff_of_one_version(client: TestClient) -> None:
    base = _session(client)
    assert _call(client, base, NOTE) == 200
    diff = client.get(f"/sessions/{base}/diff", params={"version": 1}).json()
    assert diff["from_version"] == 0 and diff["to_version"] == 1
    assert any(op["op"] == "add" for op in diff["patch"])
    missing = client.get(f"/sessions/{base}/diff", params={"version": 2})
    assert missing.status_code == 404 and "version 1" in missing.json()["detail"]


def test_viewer_cookie_reads_but_never_writes(make_client) -> None:
    client = make_client(api_key="s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    base = client.post("/sessions", json={}, headers=auth).json()["session_id"]
    assert client.get("/sessions").status_code == 401
    assert client.get("/ui", follow_redirects=False).headers["location"] == "/ui/login"
    assert client.post("/ui/login", data={"key": "wrong"}).status_code == 401
    signed_in = client.post("/ui/login", data={"key": "s3cret"}, follow_redirects=False)
    assert signed_in.status_code == 303 and UI_COOKIE in signed_in.headers["set-cookie"]
    assert "s3cret" not in signed_in.headers["set-cookie"] and "httponly" in signed_in.headers["set-cookie"].lower()
    cookies = {UI_COOKIE: ui_token("s3cret")}
    client.cookies.update(cookies)
    assert client.get("/sessions").status_code == 200
    assert client.get(f"/sessions/{base}/history").status_code == 200
    assert client.post(f"/sessions/{base}/fork").status_code == 401  # read-only
    assert client.delete(f"/sessions/{base}").status_code == 401
    assert client.get("/toolkits").status_code == 401  # only the viewer's paths


def test_viewer_page_and_its_files(client: TestClient) -> None:
    page = client.get("/ui")
    assert page.status_code == 200 and '<script type="module" src="/ui/static/app.js">' in page.text
    assert "http" not in page.text.replace("http-equiv", "")  # nothing from outside
    script = client.get("/ui/static/app.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert "innerHTML" not in script.text  # server data goes in as text only
    assert client.get("/ui/static/app.css").status_code == 200
    assert client.get("/ui/static/..%2Fapp.py").status_code == 404
    assert client.get("/ui/static/missing.js").status_code == 404
    assert "/ui" not in str(client.get("/openapi.json").json()["paths"])
