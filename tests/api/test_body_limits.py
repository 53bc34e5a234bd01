"""Issue 13, rows 1–3: deep or huge bodies, integer ranges, lone surrogates, big integers in states.

Each test first reproduces what the attack found (a 500, an unreadable session, a rounded integer) and
checks the answer is now a clear 4xx problem, or an exact round trip.
"""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from gecko.pipeline.validate.syntactic import validate_arguments
from gecko.sessions.model import Commit, StateUnreadable
from gecko.sessions.service import mutate_session
from gecko.toolkits.model import Operation
from utils.jsonlimits import (
    READABLE_DEPTH,
    JsonLimitExceeded,
    JsonLimits,
    check_json,
    is_readable,
    parse_json,
)
from utils.schema import fastcheck
from utils.settings import Settings

PROBLEM = "application/problem+json"
NOTE = {"title": "Groceries", "body": "milk"}


def nested(depth: int, leaf: str = "1") -> str:
    """JSON text of objects nested `depth` levels deep."""
    return '{"a":' * depth + leaf + "}" * depth


def post_raw(client, path: str, text: str, headers: dict[str, str] | None = None):
    return client.post(path, content=text.encode("utf-8", "surrogatepass"),
                       headers={"content-type": "application/json", **(headers or {})})


@pytest.fixture
def sqlite_client(make_client):
    return make_client(store="sqlite")


@pytest.fixture
def sid(sqlite_client) -> dict[str, str]:
    return {"X-Session-ID": sqlite_client.get("/session-id").json()["session_id"]}


# -- row 1: deep JSON never makes a session unreadable ------------------------------------------------------


def test_deep_tool_call_is_413_and_the_session_stays_readable(sqlite_client, sid):
    body = '{"title":"t","body":"b","z":' + nested(300) + "}"
    r = post_raw(sqlite_client, "/notes/create_note", body, sid)
    assert r.status_code == 413 and r.headers["content-type"] == PROBLEM
    problem = r.json()
    assert problem["limit"] == "depth" and problem["maximum"] == 64 and problem["pointer"].startswith("/z/a/a")
    assert "--max-json-depth" in problem["detail"]
    session = sid["X-Session-ID"]
    for path in (f"/sessions/{session}", f"/sessions/{session}/history", f"/sessions/{session}/state",
                 "/get-session-state"):
        assert sqlite_client.get(path, headers=sid).status_code == 200, path
    assert sqlite_client.post(f"/sessions/{session}/fork").status_code == 201


@pytest.mark.parametrize("depth", [300, 1000, 100_000])
@pytest.mark.parametrize("path", ["/sessions", "/set-session-state", "/init-session-state",
                                  "/update-state-from-real", "/notes/create_note", "/create_note"])
def test_every_body_endpoint_refuses_deep_json_with_413(sqlite_client, sid, path, depth):
    body = '{"state":' + nested(depth) + "}"
    r = post_raw(sqlite_client, path, body, sid)
    assert r.status_code == 413 and r.json()["limit"] == "depth", r.text[:300]


@pytest.mark.parametrize("path", ["checklist", "judge"])
def test_session_body_endpoints_refuse_deep_json(sqlite_client, sid, path):
    r = post_raw(sqlite_client, f"/sessions/{sid['X-Session-ID']}/{path}", '{"task":' + nested(1000) + "}")
    assert r.status_code == 413 and r.json()["limit"] == "depth"


def test_failed_create_leaves_no_session_behind(sqlite_client):
    before = sqlite_client.get("/health").json()["sessions"]
    r = post_raw(sqlite_client, "/sessions", '{"state":' + nested(300) + "}")
    assert r.status_code == 413
    assert sqlite_client.get("/health").json()["sessions"] == before


def test_state_at_the_depth_limit_is_stored_and_read_back(sqlite_client, sid):
    state = json.loads(nested(62))  # body {"state": …} is 63 deep, under the default 64
    assert sqlite_client.post("/set-session-state", json={"state": state}, headers=sid).status_code == 200
    assert sqlite_client.get("/get-session-state", headers=sid).json()["state"] == state
    assert sqlite_client.get(f"/sessions/{sid['X-Session-ID']}/history").status_code == 200


def test_the_deepest_configurable_limit_still_reads_back(make_client):
    client = make_client(store="sqlite", max_json_depth=128)
    state = json.loads(nested(127))
    created = client.post("/sessions", json={"state": state})
    assert created.status_code == 201
    session = created.json()["session_id"]
    assert client.get(f"/sessions/{session}").json()["state"] == state
    assert client.post(f"/sessions/{session}/fork").status_code == 201
    with pytest.raises(ValidationError):
        Settings(max_json_depth=129)


async def test_a_state_too_deep_to_read_back_is_never_committed(make_client):
    client = make_client()
    store = client.app.state.gecko.store
    session = client.get("/session-id").json()["session_id"]

    async def change(record):
        return Commit(state=json.loads(nested(READABLE_DEPTH + 1)), history={"tool": "#test"})

    with pytest.raises(StateUnreadable):
        await mutate_session(store, session, change)
    record = await store.get(session)
    assert record.version == 0 and record.state == {}


def test_is_readable_stops_at_the_readable_depth():
    assert is_readable(json.loads(nested(READABLE_DEPTH)))
    assert not is_readable(json.loads(nested(READABLE_DEPTH + 1)))


# -- row 2: a huge array never holds a worker ---------------------------------------------------------------


def test_500k_item_array_is_refused_before_validation(sqlite_client, sid):
    body = json.dumps({"title": "t", "body": "b", "tags": [1] * 500_000}, separators=(",", ":"))
    assert len(body) < Settings().max_body_bytes  # 976 KiB: under the byte limit, as in the attack
    r = post_raw(sqlite_client, "/notes/create_note", body, sid)
    assert r.status_code == 413 and r.json()["limit"] == "array_items" and r.json()["pointer"] == "/tags"


@pytest.mark.parametrize(("payload", "limit", "pointer"), [
    ({"tags": ["a"] * 10_001}, "array_items", "/tags"),
    ({"m": [[0] * 9_000] * 12}, "nodes", "/m/0"),
    ({"body": "x" * 100_001}, "string_chars", "/body"),
    ({"k" * 100_001: 1}, "string_chars", "/" + "k" * 199 + "…"),
])
def test_each_json_limit_is_a_413_naming_it(sqlite_client, sid, payload, limit, pointer):
    r = sqlite_client.post("/notes/create_note", json={**NOTE, **payload}, headers=sid)
    assert r.status_code == 413 and r.headers["content-type"] == PROBLEM
    assert (r.json()["limit"], r.json()["pointer"]) == (limit, pointer)
    assert sqlite_client.get(f"/sessions/{sid['X-Session-ID']}/history").json()["calls"] == []


def test_limits_are_configurable(make_client):
    client = make_client(max_array_items=2, max_json_depth=3, max_json_nodes=50, max_string_chars=5)
    session = {"X-Session-ID": client.get("/session-id").json()["session_id"]}
    r = client.post("/notes/create_note", json={"title": "t", "body": "b", "tags": ["a", "b", "c"]}, headers=session)
    assert r.status_code == 413 and r.json()["maximum"] == 2
    r = client.post("/notes/create_note", json={"title": "t", "body": "toolong"}, headers=session)
    assert r.status_code == 413 and r.json()["limit"] == "string_chars"
    assert client.post("/notes/create_note", json={"title": "t", "body": "b"}, headers=session).status_code == 200


def test_explaining_a_big_invalid_array_visits_only_the_invalid_item(client, monkeypatch):
    """10,000 valid items and one invalid: the Python validator descends into one item, not 10,000."""
    operation = client.app.state.gecko.registry.get("notes", "create_note")
    descents: list[object] = []
    real = fastcheck.FastCheck._accepts

    def counting(self, schema, instance):
        accepted = real(self, schema, instance)
        if not accepted:
            descents.append(instance)
        return accepted

    monkeypatch.setattr(fastcheck.FastCheck, "_accepts", counting)
    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": {
        "type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}}}}
    big = Operation(**{**operation.__dict__, "args_schema": schema, "args_validator": Draft202012Validator(schema),
                       "args_check": None, "response_check": None})
    rows = [{"n": i} for i in range(10_000)] + [{"n": "x"}]
    violations = validate_arguments(big, {"rows": rows})
    assert [(v.pointer, v.keyword) for v in violations] == [("/rows/10000/n", "type")]
    assert len(descents) < 10


# -- row 3: integer ranges, surrogates, big integers ----------------------------------------------------------


@pytest.mark.parametrize(("path", "name"), [
    ("/sessions/{sid}/history?offset=9223372036854775808", "offset"),
    ("/sessions/{sid}/history?offset=99999999999999999999999999", "offset"),
    ("/sessions/{sid}/state?version=9223372036854775808", "version"),
    ("/toolkits?offset=9223372036854775808", "offset"),
    ("/sessions/{sid}/history?limit=9223372036854775808", "limit"),
])
def test_integers_beyond_64_bits_in_queries_are_422_naming_the_parameter(sqlite_client, sid, path, name):
    r = sqlite_client.get(path.format(sid=sid["X-Session-ID"]))
    assert r.status_code == 422 and r.headers["content-type"] == PROBLEM
    assert r.json()["errors"][0]["pointer"] == f"/query/{name}"


def test_the_largest_64_bit_offset_is_served(sqlite_client, sid):
    r = sqlite_client.get(f"/sessions/{sid['X-Session-ID']}/history?offset={2**63 - 1}")
    assert r.status_code == 200 and r.json()["calls"] == []
    r = sqlite_client.get(f"/sessions/{sid['X-Session-ID']}/state?version={2**63 - 1}")
    assert r.status_code == 404 and r.json()["type"].endswith("unknown-version")


@pytest.mark.parametrize(("path", "text", "pointer"), [
    ("/sessions", '{"state": {"x": "\\ud800"}}', "/state/x"),
    ("/sessions", '{"config": {"labels": {"run": "a\\udfffb"}}}', "/config/labels/run"),
    ("/sessions", '{"state": {"\\ud800": 1}}', "/state/\\ud800"),
    ("/set-session-state", '{"state": {"list": [1, "\\ud800"]}}', "/state/list/1"),
    ("/notes/create_note", '{"title": "t", "body": "\\udc00"}', "/body"),
    ("/create_note", '{"title": "\\ud800", "body": "b"}', "/title"),
    ("/update-state-from-real", '{"tool_calls": [{"name": "\\ud800"}]}', "/tool_calls/0/name"),
])
def test_lone_surrogates_are_422_naming_where(sqlite_client, sid, path, text, pointer):
    r = post_raw(sqlite_client, path, text, sid)
    assert r.status_code == 422 and r.headers["content-type"] == PROBLEM, r.text
    problem = r.json()
    assert problem["type"].endswith("invalid-json-value")
    assert problem["errors"] == [{"pointer": pointer, "keyword": "surrogate", "message": problem["detail"]}]


def test_paired_surrogates_are_ordinary_text(sqlite_client, sid):
    r = post_raw(sqlite_client, "/set-session-state", '{"state": {"smile": "\\ud83d\\ude00"}}', sid)
    assert r.status_code == 200
    assert sqlite_client.get("/get-session-state", headers=sid).json()["state"] == {"smile": "😀"}


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_422(sqlite_client, sid, number):
    r = post_raw(sqlite_client, "/set-session-state", '{"state": {"x": ' + number + "}}", sid)
    assert r.status_code == 422 and r.json()["errors"][0] == {
        "pointer": "/state/x", "keyword": "finite", "message": r.json()["detail"]}


BIG = {"u64_plus_one": 2**64, "below_i64": -(2**63) - 1, "huge": 10**40, "i64_max": 2**63 - 1,
       "nested": [{"n": 2**70}], "float": 1.5}


@pytest.mark.parametrize("store", ["memory", "sqlite", "redis"])
def test_big_integers_in_states_round_trip_exactly(make_client, request, store):
    client = make_client(store=request.getfixturevalue("redis_url") if store == "redis" else store)
    created = client.post("/sessions", content=json.dumps({"state": BIG}), headers={"content-type": "application/json"})
    assert created.status_code == 201 and json.loads(created.text)["state"] == BIG
    session = {"X-Session-ID": created.json()["session_id"]}
    sid = session["X-Session-ID"]
    assert json.loads(client.get("/get-session-state", headers=session).text)["state"] == BIG
    assert json.loads(client.get(f"/sessions/{sid}").text)["state"] == BIG
    changed = {**BIG, "more": 2**65}
    assert client.post("/set-session-state", json={"state": changed}, headers=session).status_code == 200
    assert json.loads(client.get(f"/sessions/{sid}/state?version=0").text)["state"] == BIG
    assert json.loads(client.get(f"/sessions/{sid}/state?version=1").text)["state"] == changed
    fork = json.loads(client.post(f"/sessions/{sid}/fork").text)
    assert fork["state"] == changed


def test_big_integer_arguments_are_recorded_exactly(sqlite_client, sid):
    r = sqlite_client.post("/notes/create_note", json={"title": "t", "body": "b", "priority": 2**64}, headers=sid)
    assert r.status_code == 422 and r.json()["errors"][0]["pointer"] == "/priority"
    calls = json.loads(sqlite_client.get(f"/sessions/{sid['X-Session-ID']}/history").text)["calls"]
    assert calls[0]["arguments"]["priority"] == 2**64


# -- the checker itself -----------------------------------------------------------------------------------------


def test_check_json_counts_values_and_depth():
    limits = JsonLimits(max_depth=2, max_array_items=3, max_nodes=6, max_string_chars=3)
    check_json({"a": [1, 2, 3], "b": "abc"}, limits)  # 1 + 2 + 3 values, depth 2
    with pytest.raises(JsonLimitExceeded, match="more JSON values in total than 6") as info:
        check_json({"a": [1, 2, 3], "b": "abc", "c": None}, limits)
    assert info.value.limit == "nodes"
    with pytest.raises(JsonLimitExceeded) as info:
        check_json({"a": [[]]}, limits)
    assert (info.value.limit, info.value.pointer) == ("depth", "/a/0")
    check_json("abc", limits)
    with pytest.raises(JsonLimitExceeded):
        check_json("abcd", limits)


def test_parse_json_keeps_integers_exact_and_refuses_depth_beyond_recursion():
    assert parse_json(b'{"n": 18446744073709551616, "m": 1}', JsonLimits()) == {"n": 2**64, "m": 1}
    with pytest.raises(JsonLimitExceeded):
        parse_json(b"[" * 50_000 + b"]" * 50_000, JsonLimits(max_depth=128))
    with pytest.raises(ValueError):
        parse_json(b'{"a": }', JsonLimits())
