"""The state controller over Gecko's HTTP API: every intervention kind, the history record, the session's
policy endpoints, forks, the server-wide `--faults`, exact replay, and the judge's view of injected faults."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from utils.settings import Settings

NOTE = {"title": "t", "body": "b"}


def rule(name: str, do: dict, **when) -> dict:
    return {"name": name, "when": when, "do": do}


def new_session(client, *rules: dict, seed: int = 0, state: dict | None = None) -> tuple[str, dict[str, str]]:
    config = {"faults": {"seed": seed, "rules": list(rules)}} if rules else {}
    reply = client.post("/sessions", json={"config": config, "state": state or {}})
    assert reply.status_code == 201, reply.text
    sid = reply.json()["session_id"]
    return sid, {"X-Session-ID": sid}


def fault_of(reply) -> dict | None:
    header = reply.headers.get("X-Gecko-Fault")
    return json.loads(header) if header else None


def history(client, sid: str) -> list[dict]:
    return client.get(f"/sessions/{sid}/history").json()["calls"]


@pytest.mark.parametrize(("do", "status", "retry_after"), [
    ({"kind": "timeout", "seconds": 9}, 504, None),
    ({"kind": "rate_limit", "retry_after": 2}, 429, "2"),
    ({"kind": "unavailable", "retry_after": 0.5}, 503, "0.5"),
    ({"kind": "server_error", "status": 502}, 502, None),
    ({"kind": "expire_session"}, 401, None),
])
def test_blocking_faults_answer_like_the_service_and_nothing_runs(client, do, status, retry_after):
    sid, h = new_session(client, rule("boom", do, calls=[1]))
    reply = client.post("/notes/create_note", json=NOTE, headers=h)
    assert reply.status_code == status and reply.headers.get("Retry-After") == retry_after
    problem = reply.json()
    assert problem["status"] == status and problem["tool"] == "notes/create_note" and "inject" not in reply.text
    expected = {"rule": "boom", "kind": do["kind"], "level": "state" if do["kind"] == "expire_session" else "tool",
                "call": 1, "executed": False, **{k: v for k, v in do.items() if k != "kind"}}
    assert fault_of(reply).items() >= expected.items()
    assert client.get(f"/sessions/{sid}").json()["version"] == 0  # the call did not run
    again = client.post("/notes/create_note", json=NOTE, headers=h)
    assert again.status_code == 200 and "X-Gecko-Fault" not in again.headers
    calls = history(client, sid)
    assert [c["status"] for c in calls] == [status, 200]
    assert calls[0]["fault"]["rule"] == "boom" and calls[0]["errors"][0]["source"] == "fault"
    assert "fault" not in calls[1]


def test_a_timeout_that_executed_keeps_its_effects_and_loses_the_answer(client):
    sid, h = new_session(client, rule("lost", {"kind": "timeout", "executed": True}, calls=[1]))
    reply = client.post("/notes/create_note", json=NOTE, headers=h)
    assert reply.status_code == 504 and fault_of(reply)["executed"] is True
    assert client.get(f"/sessions/{sid}").json()["version"] == 1  # the write happened


def test_state_level_interventions(client):
    sid, h = new_session(
        client,
        rule("late", {"kind": "delay", "seconds": 0.01}, calls=[1]),
        rule("other", {"kind": "external_change", "patch": [{"op": "add", "path": "/moved", "value": True}],
                       "note": "a colleague edited it"}, calls=[2]),
        rule("broken", {"kind": "corrupt", "mode": "null_field"}, calls=[3]),
        rule("bad-patch", {"kind": "external_change", "patch": [{"op": "remove", "path": "/nope"}]}, calls=[4]),
    )
    late = client.post("/notes/create_note", json=NOTE, headers=h)
    assert late.status_code == 200 and fault_of(late)["kind"] == "delay"
    moved = client.post("/notes/create_note", json=NOTE, headers=h)
    assert moved.status_code == 200 and fault_of(moved)["applied"] is True
    record = client.get(f"/sessions/{sid}").json()
    assert record["state"]["moved"] is True and record["version"] == 2  # the change, then the call's own write
    broken = client.post("/notes/create_note", json=NOTE, headers=h)
    record = fault_of(broken)
    assert broken.status_code == 200 and record["mode"] == "null_field"
    pointer = record["pointer"].lstrip("/").split("/")
    value = broken.json()
    for part in pointer:
        value = value[int(part) if isinstance(value, list) else part]
    assert value is None and history(client, sid)[2]["response"] == broken.json()  # the history has what was sent
    unapplied = client.post("/notes/create_note", json=NOTE, headers=h)
    assert unapplied.status_code == 200 and fault_of(unapplied)["applied"] is False


def test_a_stale_read_answers_what_the_read_answered_before_the_last_change(client):
    sid, h = new_session(client, rule("lag", {"kind": "stale_read"}, access="read"))
    first = client.post("/notes/list_notes", headers=h)
    assert first.status_code == 200 and "X-Gecko-Fault" not in first.headers  # no earlier answer yet
    client.post("/notes/create_note", json=NOTE, headers=h)
    stale = client.post("/notes/list_notes", headers=h)
    assert stale.status_code == 200 and stale.json() == first.json()
    assert fault_of(stale) == {"rule": "lag", "kind": "stale_read", "level": "state", "call": 3, "executed": False,
                               "from_version": 0}
    assert client.get(f"/sessions/{sid}").json()["version"] == 1


def test_a_constraint_arrives_as_a_notice_and_joins_the_checklist(client):
    sid, h = new_session(client, {**rule("deadline", {"kind": "constraint", "text": "Tag every note urgent."},
                                         after_writes=1), "limit": 1}, rule("swap", {"kind": "constraint", "text": "Use title X.",
                                                                     "replaces": "1", "deliver": "user"}, calls=[3]))
    assert "_notice" not in client.post("/notes/create_note", json=NOTE, headers=h).json()
    noticed = client.post("/notes/create_note", json=NOTE, headers=h)
    assert noticed.json()["_notice"] == "Tag every note urgent." and noticed.json()["status"] == "saved"
    assert fault_of(noticed)["checklist_item"] == "constraint-1"
    swapped = client.post("/notes/create_note", json=NOTE, headers=h)
    assert fault_of(swapped)["delivered"] == "notice (a simulation has no user)"
    items = client.post(f"/sessions/{sid}/checklist", json={"task": "Save notes"}).json()["items"]
    assert items == [{"id": "1", "description": "Use title X."},
                     {"id": "constraint-1", "description": "Tag every note urgent."}]
    faults = client.get(f"/sessions/{sid}/faults").json()
    assert [c["id"] for c in faults["constraints"]] == ["constraint-1", "1"]
    verdict = client.post(f"/sessions/{sid}/judge", json={"task": "Save notes"}).json()
    assert [i["id"] for i in verdict["items"]] == ["1", "constraint-1"]


def test_invalid_calls_never_reach_the_controller(client):
    sid, h = new_session(client, rule("first", {"kind": "rate_limit"}, calls=[1]))
    assert client.post("/notes/create_note", json={}, headers=h).status_code == 422
    limited = client.post("/notes/create_note", json=NOTE, headers=h)
    assert limited.status_code == 429  # the first call that would run is call 1
    assert "fault" not in history(client, sid)[0]


def test_session_policy_endpoints_fork_and_validation(client):
    bad = client.post("/sessions", json={"config": {"faults": {"rules": [{"name": "x", "do": {"kind": "delay"}}]}}})
    assert bad.status_code == 422 and bad.json()["errors"][0]["pointer"].startswith("/config/faults/rules/0/do")
    sid, h = new_session(client)
    assert client.get(f"/sessions/{sid}/faults").json()["source"] == "none"
    policy = {"seed": 3, "rules": [rule("limited", {"kind": "rate_limit"}, every=2)]}
    put = client.put(f"/sessions/{sid}/faults", json=policy)
    assert put.status_code == 200 and put.json()["source"] == "session" and put.json()["policy"]["seed"] == 3
    assert client.put(f"/sessions/{sid}/faults", json={"rules": "x"}).status_code == 422
    client.post("/notes/create_note", json=NOTE, headers=h)
    assert client.post("/notes/create_note", json=NOTE, headers=h).status_code == 429
    got = client.get(f"/sessions/{sid}/faults").json()
    assert got["state"] == {"calls": 2, "writes": 1, "fired": {"limited": 1}}
    assert got["injected"] == {"total": 1, "by_level": {"tool": 1}, "by_kind": {"rate_limit": 1},
                               "by_rule": {"limited": 1}}
    assert client.get(f"/sessions/{sid}/usage").json()["faults"]["total"] == 1

    inherited = client.post(f"/sessions/{sid}/fork").json()["session_id"]
    assert client.get(f"/sessions/{inherited}/faults").json()["state"]["calls"] == 2  # policy and count go along
    assert client.post("/notes/create_note", json=NOTE, headers={"X-Session-ID": inherited}).status_code == 200
    assert client.post("/notes/create_note", json=NOTE, headers={"X-Session-ID": inherited}).status_code == 429
    replaced = client.post(f"/sessions/{sid}/fork", json={"faults": {"rules": [
        rule("down", {"kind": "unavailable"}, calls=[1])]}}).json()["session_id"]
    assert client.post("/notes/create_note", json=NOTE, headers={"X-Session-ID": replaced}).status_code == 503
    cleared = client.post(f"/sessions/{sid}/fork", json={"faults": None}).json()["session_id"]
    assert client.get(f"/sessions/{cleared}/faults").json()["source"] == "none"
    assert client.post(f"/sessions/{sid}/fork", json={"fault": None}).status_code == 422

    removed = client.delete(f"/sessions/{sid}/faults").json()
    assert removed["source"] == "none" and removed["state"] == {} and removed["injected"]["total"] == 1
    assert client.get("/sessions/nope/faults").status_code == 404


def test_server_wide_policy_applies_to_sessions_without_their_own(make_client):
    client = make_client(faults="rate-limited")
    sid, h = new_session(client)
    assert client.get(f"/sessions/{sid}/faults").json()["policy"]["name"] == "rate-limited"
    statuses = [client.post("/notes/list_notes", headers=h).status_code for _ in range(6)]
    assert statuses == [200, 200, 429, 200, 200, 429]
    off, h_off = new_session(client)
    client.put(f"/sessions/{off}/faults", json={"rules": []})  # opt out of the server's policy
    assert client.get(f"/sessions/{off}/faults").json()["policy"] is None
    assert all(client.post("/notes/list_notes", headers=h_off).status_code == 200 for _ in range(3))
    metrics = client.get("/metrics").text
    assert 'gecko_faults_injected_total{kind="rate_limit",level="tool"} 2.0' in metrics
    with pytest.raises(ValidationError, match="no fault policy file"):
        Settings(faults="no-such-profile")


def test_the_same_policy_over_the_same_calls_replays_exactly(client):
    policy = [rule("net", {"kind": "unavailable"}, probability=0.3), rule("slow", {"kind": "corrupt"}, probability=0.2),
              rule("lag", {"kind": "stale_read"}, access="read", probability=0.5)]

    def run() -> list:
        sid, h = new_session(client, *policy, seed=5)
        for i in range(30):
            if i % 3:
                client.post("/notes/create_note", json={"title": f"n{i % 4}", "body": "b"}, headers=h)
            else:
                client.post("/notes/list_notes", headers=h)
        return [(c["status"], c.get("fault")) for c in history(client, sid)]

    first = run()
    assert first == run()
    assert {f["kind"] for _, f in first if f} == {"unavailable", "corrupt", "stale_read"}


def test_the_rules_judge_tells_injected_failures_from_the_agents_own(client):
    sid, h = new_session(client, rule("once", {"kind": "unavailable"}, calls=[1]))
    client.post("/notes/create_note", json=NOTE, headers=h)
    assert client.post(f"/sessions/{sid}/judge", json={"task": "Save a note"}).json()["success"] is False
    client.post("/notes/create_note", json=NOTE, headers=h)  # the same call, retried, went through
    assert client.post(f"/sessions/{sid}/judge", json={"task": "Save a note"}).json()["success"] is True


def test_a_session_without_a_policy_never_reaches_the_controller(client, monkeypatch):
    """The no-fault path is the `policy_for` check alone: no decision, no controller state written."""
    from gecko.pipeline.faults import FaultPolicies

    async def no_step(*args, **kwargs):
        raise AssertionError("the controller ran for a session without a policy")

    monkeypatch.setattr(FaultPolicies, "step", no_step)
    sid, h = new_session(client)
    assert client.post("/notes/create_note", json=NOTE, headers=h).status_code == 200
    assert client.post("/notes/list_notes", json={}, headers=h).status_code == 200
    assert "fault_state" not in client.get(f"/sessions/{sid}").json()["config"]


def test_synced_real_calls_move_the_controller_count(client):
    """Real calls folded in with /update-state-from-real are calls of the session: the next call (and a fork made
    now, e.g. the next turn's GATS attempt) draws the numbers after them."""
    sid, h = new_session(client, rule("third", {"kind": "unavailable"}, calls=[3]))
    synced = client.post("/update-state-from-real", headers=h, json={"tool_calls": [
        {"name": "create_note", "toolkit": "notes", "arguments": NOTE, "result": {"id": 1, **NOTE}},
        {"name": "list_notes", "toolkit": "notes", "arguments": {}, "result": {"notes": []}}]})
    assert synced.status_code == 200, synced.text
    state = client.get(f"/sessions/{sid}/faults").json()["state"]
    assert (state["calls"], state["writes"]) == (2, 1)
    fork = client.post(f"/sessions/{sid}/fork").json()["session_id"]
    assert client.post("/notes/create_note", json=NOTE, headers={"X-Session-ID": fork}).status_code == 503
    assert client.post("/notes/create_note", json=NOTE, headers=h).status_code == 503  # call 3 of the session
    plain, ph = new_session(client)
    client.post("/update-state-from-real", headers=ph, json={"tool_calls": [
        {"name": "list_notes", "toolkit": "notes", "arguments": {}, "result": {"notes": []}}]})
    assert "fault_state" not in client.get(f"/sessions/{plain}").json()["config"]  # no policy: nothing counted
