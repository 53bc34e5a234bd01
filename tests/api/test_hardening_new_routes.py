"""Issue 13 on the routes added since it was filed: the session's fault policy (`PUT|GET|DELETE
/sessions/{id}/faults`, `config.faults`, the fork body), the listing and views (`GET /sessions`, `/tree`,
`/diff`) and the viewer's paths. The same limits, the same problems, nothing stored that cannot be read back.

Each test reproduces what `make fuzz` (schemathesis) or a hand-made input found on them.
"""

from __future__ import annotations

import json

import pytest

from utils.faults.policy import MAX_SEED, FaultPolicy
from utils.jsonlimits import READABLE_DEPTH

PROBLEM = "application/problem+json"
NOTE = {"title": "t", "body": "b"}


def nested(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


def post_raw(client, method: str, path: str, text: str):
    return client.request(method, path, content=text.encode("utf-8", "surrogatepass"),
                          headers={"content-type": "application/json"})


def new_session(client) -> str:
    return client.get("/session-id").json()["session_id"]


def assert_readable(client, sid: str) -> None:
    for path in (f"/sessions/{sid}", f"/sessions/{sid}/history", f"/sessions/{sid}/state", f"/sessions/{sid}/faults",
                 f"/sessions/{sid}/usage", f"/sessions/{sid}/tree", "/sessions"):
        assert client.get(path).status_code == 200, path


# -- row 1: deep JSON on the new body routes ----------------------------------------------------------------


@pytest.mark.parametrize("depth", [300, 1000, 100_000])
@pytest.mark.parametrize(("method", "path", "wrap"), [
    ("PUT", "/sessions/{sid}/faults", '{{"description": {}}}'),
    ("POST", "/sessions/{sid}/fork", '{{"labels": {}}}'),
    ("POST", "/sessions", '{{"config": {{"faults": {}}}}}'),
])
def test_deep_json_on_policy_and_fork_bodies_is_413_and_the_session_stays_readable(client, depth, method, path,
                                                                                  wrap):
    sid = new_session(client)
    r = post_raw(client, method, path.format(sid=sid), wrap.format(nested(depth)))
    assert r.status_code == 413 and r.headers["content-type"] == PROBLEM and r.json()["limit"] == "depth"
    assert_readable(client, sid)


@pytest.mark.parametrize(("method", "path", "text", "pointer"), [
    ("PUT", "/sessions/{sid}/faults", '{"name": "\\ud800"}', "/name"),
    ("POST", "/sessions/{sid}/fork", '{"labels": {"run": "\\udfff"}}', "/labels/run"),
    ("POST", "/sessions/{sid}/fork", '{"note": "a\\ud800"}', "/note"),
])
def test_lone_surrogates_in_policy_and_fork_bodies_are_422_naming_where(client, method, path, text, pointer):
    sid = new_session(client)
    r = post_raw(client, method, path.format(sid=sid), text)
    assert r.status_code == 422 and r.json()["errors"][0]["pointer"] == pointer


# -- row 1: what is stored reads back -------------------------------------------------------------------------


@pytest.mark.parametrize("test", [{"not_equals": None}, {"equals": None}, {"exists": None}])
def test_a_policy_whose_state_test_is_null_reads_back(client, test):
    """`{"not_equals": null}` was stored without its test (`exclude_none`): every read of the session's policy,
    and every later call, answered 500."""
    sid = new_session(client)
    policy = {"rules": [{"name": "r", "when": {"state": {"path": "/x", **test}}, "do": {"kind": "delay",
                                                                                      "seconds": 0.01}}]}
    put = client.put(f"/sessions/{sid}/faults", json=policy)
    assert put.status_code == 200, put.text
    got = client.get(f"/sessions/{sid}/faults")
    assert got.status_code == 200 and got.json()["policy"]["rules"][0]["when"]["state"] == {"path": "/x", **test}
    assert client.post("/notes/create_note", json=NOTE, headers={"X-Session-ID": sid}).status_code == 200
    fork = client.post(f"/sessions/{sid}/fork")
    assert fork.status_code == 201
    assert_readable(client, fork.json()["session_id"])


def test_every_policy_round_trips_through_its_stored_form():
    policy = FaultPolicy.model_validate({"seed": MAX_SEED, "rules": [
        {"name": "a", "when": {"tools": "notes/*", "state": {"path": "", "equals": None}}, "do": {"kind": "corrupt"}},
        {"name": "b", "when": {"calls": [1, 2.0], "from": 1, "until": 3}, "do": {"kind": "external_change", "patch": [
            {"op": "add", "path": "/x", "value": None}, {"op": "remove", "path": "/y"}]}, "limit": 2},
    ]})
    assert FaultPolicy.model_validate(policy.public()) == policy


def test_an_external_change_that_would_nest_too_deep_is_not_applied(client):
    """Three changes that each add 55 levels under the last: the third would pass Gecko's readable depth."""
    sid = new_session(client)
    headers = {"X-Session-ID": sid}
    assert client.post("/set-session-state", json={"state": json.loads(nested(62))}, headers=headers).status_code == 200
    paths = ["/a" * 61 + "/b", "/a" * 61 + "/b" + "/a" * 54 + "/c", "/a" * 61 + "/b" + "/a" * 54 + "/c" + "/a" * 54 + "/d"]
    value = json.loads(nested(55))
    rules = [{"name": f"deeper{n}", "when": {"calls": [n]},
              "do": {"kind": "external_change", "patch": [{"op": "add", "path": path, "value": value}]}}
             for n, path in enumerate(paths, start=1)]
    for rule in rules:  # one rule per request: each body stays within the depth limit
        policy = client.get(f"/sessions/{sid}/faults").json()["policy"] or {"rules": []}
        assert client.put(f"/sessions/{sid}/faults", json={"rules": [*policy["rules"], rule]}).status_code == 200
    for _ in rules:
        assert client.get("/notes/list_notes", headers=headers).status_code == 200
    faults = [call["fault"] for call in client.get(f"/sessions/{sid}/history").json()["calls"] if call.get("fault")]
    assert [f["applied"] for f in faults] == [True, True, False]
    assert str(READABLE_DEPTH) in faults[2]["reason"]
    assert_readable(client, sid)


# -- row 3 and row 7: the policy's numbers, booleans and documented shape --------------------------------------


@pytest.mark.parametrize(("policy", "pointer"), [
    ({"rules": [{"name": "r", "do": {"kind": "unavailable", "retry_after": False}}]}, "/rules/0/do/unavailable/retry_after"),
    ({"rules": [{"name": "r", "do": {"kind": "timeout", "wait": 1}}]}, "/rules/0/do/timeout/wait"),
    ({"seed": "3"}, "/seed"),
    ({"seed": True}, "/seed"),
    ({"seed": MAX_SEED + 1}, "/seed"),
    ({"rules": [{"name": "r", "do": {"kind": "corrupt"}, "limit": 1.5}]}, "/rules/0/limit"),
    ({"rules": [{"name": "r", "do": {"kind": "corrupt"}, "when": {"tools": [" "]}}]}, "/rules/0/when"),
])
def test_policy_values_outside_the_documented_types_are_422_naming_where(client, policy, pointer):
    r = client.put(f"/sessions/{new_session(client)}/faults", json=policy)
    assert r.status_code == 422 and r.headers["content-type"] == PROBLEM, r.text
    assert r.json()["errors"][0]["pointer"] == pointer


def test_policy_values_the_document_allows_are_accepted(client):
    policy = {"seed": 7.0, "rules": [{"name": "r", "do": {"kind": "corrupt"}, "limit": 2.0,
                                      "when": {"tools": "notes/*", "calls": [1, 3.0], "probability": 1}}]}
    r = client.put(f"/sessions/{new_session(client)}/faults", json=policy)
    assert r.status_code == 200, r.text
    assert r.json()["policy"]["seed"] == 7 and r.json()["policy"]["rules"][0]["when"]["tools"] == ["notes/*"]


def test_the_policy_schema_says_what_the_server_accepts(client):
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert schemas["StateCondition"]["oneOf"] == [{"required": ["exists"]}, {"required": ["equals"]},
                                                  {"required": ["not_equals"]}]
    tools = schemas["Match"]["properties"]["tools"]["anyOf"]
    assert tools[0] == {"type": "string", "pattern": r"\S"} and tools[1]["minItems"] == 1
    assert schemas["FaultPolicy"]["properties"]["seed"]["maximum"] == MAX_SEED
    assert schemas["ExternalChange"]["properties"]["patch"]["items"]["oneOf"][1]["properties"]["op"] == {
        "const": "remove"}


def test_no_schema_in_the_document_carries_pydantic_keywords(client):
    """A constraint applied after a validator is published by pydantic as `ge`/`le`, which no JSON Schema reads."""
    found: list[str] = []

    def walk(node, where: str) -> None:
        if isinstance(node, dict):
            if "type" in node and {"ge", "le", "gt", "lt"} & set(node):
                found.append(where)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    walk(client.get("/openapi.json").json(), "")
    assert found == []


# -- row 3 and row 7: the listing's and the views' parameters ------------------------------------------------


@pytest.mark.parametrize(("query", "name"), [
    ("label=", "label/0"), ("label=run", "label/0"), ("label==x", "label/0"), ("status=bogus", "status"),
    ("cursor=abc", "cursor"), ("cursor=nan~x", "cursor"), ("cursor=inf~x", "cursor"), ("limit=0", "limit"),
    ("limit=9223372036854775808", "limit"),
])
def test_listing_parameters_outside_the_document_are_422_naming_them(client, query, name):
    r = client.get(f"/sessions?{query}")
    assert r.status_code == 422 and r.headers["content-type"] == PROBLEM, r.text
    assert r.json()["errors"][0]["pointer"] == f"/query/{name}"


def test_listing_parameters_the_document_allows_are_served(client):
    for query in ("label=run=", "label=a=b=c", "status=ok", "cursor=", "cursor=1795420215.7172465~x", "parent="):
        assert client.get(f"/sessions?{query}").status_code == 200, query


def test_views_answer_documented_problems(client):
    sid = new_session(client)
    r = client.get(f"/sessions/{sid}/diff?version=9223372036854775808")
    assert r.status_code == 422 and r.json()["errors"][0]["pointer"] == "/query/version"
    r = client.get(f"/sessions/{sid}/diff?version=2")
    assert r.status_code == 404 and r.headers["content-type"] == PROBLEM
    r = client.get("/sessions/%C2%B8%01nope/tree")
    assert r.status_code == 404 and r.json()["type"].endswith("unknown-session")
    paths = client.get("/openapi.json").json()["paths"]
    assert {"404", "422", "503"} <= set(paths["/sessions/{session_id}/diff"]["get"]["responses"])
    assert {"404", "503"} <= set(paths["/sessions/{session_id}/tree"]["get"]["responses"])
    assert {"422", "503"} <= set(paths["/sessions"]["get"]["responses"])
    assert {"404", "413", "415", "422"} <= set(paths["/sessions/{session_id}/faults"]["put"]["responses"])
    assert {"404", "413", "422"} <= set(paths["/sessions/{session_id}/fork"]["post"]["responses"])


# -- the viewer's paths: hostile forms and names, no secret in the answer ------------------------------------


@pytest.mark.parametrize("form", [
    b"key=" + b"x" * 5000,  # beyond the form limit
    b"key=%ff%fe%00",  # not UTF-8
    "key=\u00e9\u2603\U0001f600".encode(),  # not ASCII
    b"key=%ED%A0%80",  # a lone surrogate, percent-encoded
    b"\xff\xfe",  # no form at all
])
def test_the_sign_in_form_answers_hostile_bodies_without_a_500_or_the_key(make_client, form):
    client = make_client(api_key="s3cret")
    r = client.post("/ui/login", content=form, headers={"content-type": "application/x-www-form-urlencoded"},
                    follow_redirects=False)
    assert r.status_code in (401, 413) and "s3cret" not in r.text and "set-cookie" not in r.headers


@pytest.mark.parametrize("name", ["..%2F..%2Fpyproject.toml", "%2Fetc%2Fpasswd", "app.js%00", "nope.js", "."])
def test_the_viewer_serves_only_its_own_files(client, name):
    assert client.get(f"/ui/static/{name}").status_code == 404
