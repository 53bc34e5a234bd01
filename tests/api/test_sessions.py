from __future__ import annotations

GOOD_NOTE = {"title": "t", "body": "b"}


def test_health_reports_roles_store_and_counts(client):
    h = client.get("/health").json()
    assert h["status"] == "ok" and h["store"] == "memory" and h["toolkits"] == 2 and h["tools"] == 5
    assert h["roles"]["responder"] == {"model": "rules", "engine": "rules"}
    assert h["roles"]["validator"]["engine"] == "none" and h["offline"] is True
    assert h["workers"]["live"] == 1


def test_toolkits_listing(client):
    body = client.get("/toolkits").json()
    assert body["total"] == 2
    notes = next(t for t in body["toolkits"] if t["name"] == "notes")
    assert {t["name"]: t["access"] for t in notes["tools"]} == {
        "create_note": "write", "get_note": "read", "list_notes": "read"}
    detail = client.get("/toolkits/notes").json()
    assert detail["tools"][0]["arguments_schema"]["type"] == "object"
    assert client.get("/toolkits/nope").status_code == 404


def test_session_lifecycle_history_fork_delete(client):
    created = client.post("/sessions", json={"state": {"a": 1}, "config": {"labels": {"run": "x"}}})
    assert created.status_code == 201
    sid = created.json()["session_id"]
    h = {"X-Session-ID": sid}
    client.post("/notes/create_note", json=GOOD_NOTE, headers=h)
    client.post("/notes/create_note", json={}, headers=h)
    record = client.get(f"/sessions/{sid}").json()
    assert record["version"] == 1 and record["config"] == {"labels": {"run": "x"}}
    calls = client.get(f"/sessions/{sid}/history").json()["calls"]
    assert [c["status"] for c in calls] == [200, 422]
    assert calls[0]["validation"]["syntactic"] == "valid" and calls[0]["validation"]["semantic"] == "skipped"
    assert calls[0]["engines"]["responder"] == "rules" and "total" in calls[0]["timings_ms"]
    assert calls[1]["errors"][0]["pointer"] == "/title"
    assert client.get(f"/sessions/{sid}/state", params={"version": 0}).json()["state"] == {"a": 1}
    fork = client.post(f"/sessions/{sid}/fork").json()
    assert fork["state"] == record["state"] and fork["config"]["forked_from"] == sid
    client.post("/notes/create_note", json={"title": "other", "body": "b"}, headers={"X-Session-ID": fork["session_id"]})
    assert len(client.get(f"/sessions/{sid}").json()["state"]["notes"]["notes"]) == 1
    assert client.delete(f"/sessions/{sid}").status_code == 204
    assert client.get(f"/sessions/{sid}").status_code == 404
    assert client.delete(f"/sessions/{sid}").status_code == 404


def test_compat_state_endpoints(client, session):
    assert client.post("/set-session-state", json={"state": {"k": [1]}}, headers=session).json()["version"] == 1
    assert client.get("/get-session-state", headers=session).json() == {"state": {"k": [1]}, "version": 1}
    r = client.post("/init-session-state", json={"state": {"notes": {"extra": 1}}, "involved_classes": ["notes"]},
                    headers=session).json()
    assert r["state"]["notes"] == {"notebooks": ["inbox"], "extra": 1} and r["state"]["k"] == [1]
    bad = client.post("/init-session-state", json={"involved_classes": ["nope"]}, headers=session)
    assert bad.status_code == 422
    assert client.post("/set-session-state", json={"state": 3}, headers=session).status_code == 422
    assert client.post("/set-session-state", json={"state": {}}).status_code == 400


def test_update_state_from_real(client, session):
    r = client.post("/update-state-from-real", headers=session, json={"tool_calls": [
        {"name": "get_note", "arguments": {"note_id": "N1"}, "result": {"title": "x"}, "toolkit": "notes"},
        {"name": "create_note", "arguments": GOOD_NOTE, "result": {"note_id": "N2"}},
    ]}).json()
    state = r["updated_state"]
    # both land in the world model: the real read's record under its id, the real create's record under its own
    assert state["notes"]["notes"]["N1"] == {"title": "x"}
    assert state["notes"]["notes"]["N2"] == {**GOOD_NOTE, "note_id": "N2"}
    assert "observed" not in state and "effects" not in state and state["counts"] == {"notes/create_note": 1}
    single = client.post("/update-state-from-real", headers=session,
                         json={"tool_call": {"name": "get_note", "arguments": {}, "result": 1}})
    assert single.status_code == 200
    assert client.post("/update-state-from-real", headers=session, json={"tool_calls": []}).status_code == 422
    assert client.post("/update-state-from-real", headers=session,
                       json={"tool_calls": [{"name": "x", "toolkit": "nope"}]}).status_code == 422


def test_checklist_and_rules_judge(client, session):
    sid = session["X-Session-ID"]
    items = client.post(f"/sessions/{sid}/checklist", json={"task": "Save a note"}).json()
    assert items["engine"] == "rules" and len(items["items"]) == 1
    assert client.post(f"/sessions/{sid}/judge", json={}).json()["success"] is False  # nothing done yet
    client.post("/notes/create_note", json=GOOD_NOTE, headers=session)
    verdict = client.post(f"/sessions/{sid}/judge", json={"agent_response": "saved"}).json()
    assert verdict["success"] is True and verdict["remaining"] == []
    client.post("/notes/create_note", json={}, headers=session)
    verdict = client.post(f"/sessions/{sid}/judge", json={}).json()
    assert verdict["success"] is False and verdict["items"][0]["status"] == "failed"
    assert "rejected" in verdict["items"][0]["reasoning"]
    other = client.get("/session-id").json()["session_id"]
    assert client.post(f"/sessions/{other}/judge", json={}).status_code == 409


def test_every_version_reads_back_exactly_through_the_api(make_client):
    client = make_client(checkpoint_every=3)
    sid = client.post("/sessions", json={"config": {"record_reads": True}, "state": {"user": "ada"}}).json()["session_id"]
    headers = {"X-Session-ID": sid}
    seen = {0: {"user": "ada"}}

    def remember() -> None:
        body = client.get("/get-session-state", headers=headers).json()
        seen[body["version"]] = body["state"]

    for i in range(20):
        assert client.post("/notes/create_note", json={"title": f"n{i}", "body": "b"}, headers=headers).status_code == 200
        remember()
        if i % 4 == 1:
            client.post("/notes/get_note", json={"note_id": f"N{i}"}, headers=headers)
            remember()
        if i % 5 == 2:
            client.post("/update-state-from-real", headers=headers, json={"tool_calls": [
                {"name": "create_note", "toolkit": "notes", "arguments": {"title": "r"}, "result": {"note_id": "R"}}]})
            remember()
        if i == 7:
            client.post("/set-session-state", headers=headers, json={"state": {"reset": True}})
            remember()
    assert sorted(seen) == list(range(len(seen)))
    for version, state in seen.items():
        assert client.get(f"/sessions/{sid}/state", params={"version": version}).json()["state"] == state
    state = client.get("/get-session-state", headers=headers).json()["state"]
    # the world since the reset: 12 simulated notes and the real one (written twice); reads recorded, bounded
    assert len(state["notes"]["notes"]) == 13 and state["counts"]["notes/create_note"] == 14
    assert "effects" not in state and [o["arguments"]["note_id"] for o in state["observed"]] == ["N13", "N17"]


def test_health_without_the_key_says_only_ok_and_the_version(make_client):
    secured = make_client(api_key="s3cret")
    anonymous = secured.get("/health")
    assert anonymous.status_code == 200 and anonymous.json() == {"status": "ok", "version": anonymous.json()["version"]}
    full = secured.get("/health", headers={"Authorization": "Bearer s3cret"}).json()
    assert {"roles", "pid", "workers", "sessions", "store"} <= set(full)
    open_server = make_client()
    assert "roles" in open_server.get("/health").json()  # no key configured: nothing to hide behind one


def test_identical_calls_of_one_model_message_are_not_repeats(client):
    def judged(messages: list[str | None]) -> dict:
        sid = client.get("/session-id").json()["session_id"]
        for message in messages:
            headers = {"X-Session-ID": sid} | ({"X-Gecko-Message": message} if message else {})
            assert client.post("/notes/create_note", json=GOOD_NOTE, headers=headers).status_code == 200
        history = client.get(f"/sessions/{sid}/history").json()
        assert [e.get("message") for e in history["calls"]] == messages
        return client.post(f"/sessions/{sid}/judge", json={"task": "Save two identical notes"}).json()

    assert judged(["m1.0", "m1.0"])["success"] is True  # two parallel calls of one message
    looped = judged(["m1.0", "m1.1"])
    assert looped["success"] is False and "repeat" in looped["items"][0]["reasoning"]
    assert judged([None, None])["success"] is False  # unknown messages: a repeat, as before
    sid = client.get("/session-id").json()["session_id"]
    bad = client.post("/notes/create_note", json=GOOD_NOTE, headers={"X-Session-ID": sid, "X-Gecko-Message": "a b"})
    assert bad.status_code == 400 and "X-Gecko-Message" in bad.json()["detail"]
