"""Issue 13, row 7: Gecko's own OpenAPI document describes the API the server really serves.

`make fuzz` (schemathesis, in CI) checks every response against this document; these tests pin its shape.
"""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate

PROBLEM = "application/problem+json"


@pytest.fixture
def doc(client) -> dict:
    return client.get("/openapi.json").json()


def test_the_document_is_valid_openapi_31(doc):
    validate(doc)
    assert doc["openapi"].startswith("3.1")


def test_request_bodies_are_the_pydantic_models(doc):
    bodies = {(path, method): op["requestBody"]["content"]["application/json"]["schema"]
              for path, item in doc["paths"].items() for method, op in item.items() if "requestBody" in op}
    assert bodies[("/sessions", "post")] == {"$ref": "#/components/schemas/SessionCreate"}
    assert bodies[("/set-session-state", "post")] == {"$ref": "#/components/schemas/StateBody"}
    assert bodies[("/update-state-from-real", "post")] == {"$ref": "#/components/schemas/RealCallsBody"}
    assert bodies[("/sessions/{session_id}/checklist", "post")] == {"$ref": "#/components/schemas/ChecklistRequest"}
    assert doc["components"]["schemas"]["SessionCreate"]["additionalProperties"] is False


def test_errors_are_problems_with_the_status_codes_the_server_sends(doc):
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    codes = set()
    for item in doc["paths"].values():
        for op in item.values():
            for status, response in op["responses"].items():
                if status.startswith(("4", "5")):
                    assert list(response["content"]) == [PROBLEM], (status, op.get("operationId"))
                    codes.add(int(status))
    assert {400, 404, 405, 409, 413, 415, 422, 503} <= codes
    set_state = doc["paths"]["/set-session-state"]["post"]
    assert {"400", "404", "409", "413", "415", "422", "503"} <= set(set_state["responses"])
    header = next(p for p in set_state["parameters"] if p["name"] == "X-Session-ID")
    assert header["required"] is True


def test_every_loaded_tool_is_an_operation_with_its_schemas(client, doc):
    registry = client.app.state.gecko.registry
    for toolkit in registry.toolkits.values():
        for op in toolkit.operations.values():
            spec = doc["paths"][f"/{op.toolkit}/{op.operation_id}"]["post"]
            assert spec["operationId"] == f"tool.{op.toolkit}.{op.operation_id}"
            assert spec["responses"]["422"]["content"] == {PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}}
            own = doc["paths"][f"/{op.toolkit}{op.path}"][op.method.lower()]
            assert own["responses"]["200"]["content"]["application/json"]["schema"] == (
                spec["responses"]["200"]["content"]["application/json"]["schema"])
    create_note = doc["paths"]["/notes/create_note"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert create_note["required"] == ["title", "body"] and "$defs" not in create_note
    account = doc["paths"]["/legacy30/accounts/{accountId}"]["patch"]
    assert [p["name"] for p in account["parameters"]] == ["X-Session-ID", "X-Gecko-Message", "accountId"]
    assert account["parameters"][1]["required"] is False


def test_refs_point_into_the_components(doc):
    refs = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.append(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc["paths"])
    walk(doc["components"])
    names = set(doc["components"]["schemas"])
    assert refs and all(ref.startswith("#/components/schemas/") and ref.rsplit("/", 1)[1] in names for ref in refs)


def test_links_chain_a_new_session_into_every_operation_that_takes_one(doc):
    links = doc["paths"]["/sessions"]["post"]["responses"]["201"]["links"]
    targets = {link["operationId"] for link in links.values()}
    assert "tool.notes.create_note" in targets
    history = next(link for link in links.values() if link["parameters"] == {"path.session_id": "$response.body#/session_id"})
    assert history
    assert any(link["parameters"] == {"header.X-Session-ID": "$response.body#/session_id"} for link in links.values())


def test_loaded_toolkit_names_are_the_only_valid_ones(doc):
    config = doc["components"]["schemas"]["SessionConfig"]["properties"]["toolkits"]
    array = next(branch for branch in config["anyOf"] if branch.get("type") == "array")
    assert array["items"]["enum"] == ["legacy30", "notes"]


def test_the_bearer_scheme_is_documented_when_the_server_has_a_key(make_client):
    doc = make_client(api_key="k").get("/openapi.json", headers={"Authorization": "Bearer k"}).json()
    assert doc["components"]["securitySchemes"] == {"bearer": {"type": "http", "scheme": "bearer"}}
    assert "401" in doc["paths"]["/sessions"]["post"]["responses"]
    assert doc["paths"]["/health"]["get"]["security"] == [{}, {"bearer": []}]


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("put", "/sessions/{sid}", "DELETE, GET"),
    ("post", "/health", "GET"),
    ("patch", "/sessions", "GET, POST"),
    ("post", "/sessions/{sid}/tree", "GET"),
    ("post", "/sessions/{sid}/faults", "DELETE, GET, PUT"),
    ("delete", "/ui/login", "GET, POST"),
    ("delete", "/get-session-state", "GET"),
    ("put", "/notes/create_note", "POST"),
    ("options", "/notes/list_notes", "GET, POST"),
])
def test_a_wrong_method_on_a_known_path_is_405_with_allow(client, session, method, path, allow):
    r = client.request(method, path.format(sid=session["X-Session-ID"]), headers=session)
    assert r.status_code == 405 and r.headers["content-type"] == PROBLEM
    assert r.headers["allow"] == allow and r.json()["type"].endswith("method-not-allowed")


def test_body_errors_point_into_the_body(client, session):
    r = client.post("/set-session-state", json={"state": 3}, headers=session)
    assert r.status_code == 422 and r.json()["errors"][0]["pointer"] == "/state"
    r = client.post("/sessions", json={"config": {"record_reads": 0}})
    assert r.status_code == 422 and r.json()["errors"][0]["pointer"] == "/config/record_reads"
    r = client.patch("/legacy30/accounts/5", headers=session)
    assert r.status_code == 422 and r.json()["errors"][0]["keyword"] == "required"


def test_an_empty_toolkit_name_is_an_unknown_toolkit(client, session):
    r = client.post("/update-state-from-real", headers=session,
                    json={"tool_call": {"name": "x", "toolkit": "", "result": {}}})
    assert r.status_code == 422 and r.json()["type"].endswith("unknown-toolkit")


def test_a_tools_own_404_is_documented_next_to_the_problem(make_client):
    from utils.paths import EXAMPLE_TOOLKITS_DIR

    client = make_client(schemas_dirs=[EXAMPLE_TOOLKITS_DIR])
    doc = client.get("/openapi.json").json()
    missing = doc["paths"]["/petstore/showPetById"]["post"]["responses"]["404"]["content"]
    assert set(missing) == {PROBLEM, "application/json"}
    sid = client.get("/session-id").json()["session_id"]
    created = client.post("/petstore/createPet", json={"name": "Rex", "species": "dog"}, headers={"X-Session-ID": sid})
    assert created.status_code == 201  # the declared status; the world holds pets now: another id is missing
    reply = client.post("/petstore/showPetById", json={"petId": 77615}, headers={"X-Session-ID": sid})
    assert reply.status_code == 404 and reply.headers["content-type"].startswith("application/json")
    schema = missing["application/json"]["schema"]
    assert set(schema.get("required", [])) <= set(reply.json()), (schema, reply.json())
