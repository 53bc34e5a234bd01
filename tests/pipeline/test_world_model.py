"""The rules engines' world model over HTTP: REST and function-style toolkits, declared bindings, seeded state.

Every 200 is checked against the tool's response schema as `GET /toolkits/{name}` publishes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gecko.toolkits.loader import build_toolkit, load_toolkits
from gecko.toolkits.resources import bindings_public, infer_world, plural, singular
from utils.paths import EXAMPLE_TOOLKITS_DIR


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _fn(name: str, args: dict[str, Any], response: dict[str, Any], *, read: bool = False,
        extra: dict[str, Any] | None = None) -> dict[str, Any]:
    op = {"operationId": name, "requestBody": _body({"type": "object", "additionalProperties": False, **args}),
          "responses": {**_ok(response), **(extra or {})}}
    if read:
        op["x-gecko-access"] = "read"
    return {f"/{name}": {"post": op}}


TICKET = {"type": "object", "required": ["ticket_id", "title", "status", "priority"], "properties": {
    "ticket_id": {"type": "string"}, "title": {"type": "string"},
    "status": {"type": "string", "enum": ["open", "closed"]}, "priority": {"type": "integer", "minimum": 1,
                                                                        "maximum": 5}}}
ID_ARG = {"required": ["ticket_id"], "properties": {"ticket_id": {"type": "string"}}}
NOT_FOUND = {"404": {"description": "no such ticket", "content": {"application/json": {"schema": {
    "type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}}}}}}
HELPDESK = {
    "openapi": "3.1.0",
    "info": {"title": "Helpdesk", "version": "1", "x-gecko-default-state": {
        "tickets": {"T1": {"ticket_id": "T1", "title": "Printer jam", "status": "open", "priority": 2}}}},
    "paths": {
        **_fn("create_ticket", {"required": ["title", "priority"], "properties": {
            "title": {"type": "string", "minLength": 1}, "priority": {"type": "integer", "minimum": 1, "maximum": 5},
            "dry_run": {"type": "boolean"}}}, TICKET),
        **_fn("get_ticket", ID_ARG, TICKET, read=True, extra=NOT_FOUND),
        **_fn("list_tickets", {"properties": {"status": {"type": "string", "enum": ["open", "closed"]},
                                              "limit": {"type": "integer", "minimum": 1}}},
              {"type": "object", "required": ["tickets", "count"], "properties": {
                  "tickets": {"type": "array", "items": TICKET}, "count": {"type": "integer"}}}, read=True),
        **_fn("update_ticket", {"required": ["ticket_id", "updates"], "properties": {
            "ticket_id": {"type": "string"}, "updates": {"type": "object", "properties": {
                "title": {"type": "string"}, "priority": {"type": "integer", "minimum": 1, "maximum": 5}}}}},
              TICKET, extra=NOT_FOUND),
        **_fn("close_ticket", ID_ARG, TICKET, extra=NOT_FOUND),
        **_fn("delete_ticket", ID_ARG, {"type": "object", "properties": {"deleted": {"type": "boolean"}}},
              extra=NOT_FOUND),
        **_fn("file_complaint", {"required": ["title"], "properties": {"title": {"type": "string"}}},
              {"type": "object", "required": ["ticket_id"], "properties": {"ticket_id": {"type": "string"}}}),
        **_fn("ping_tickets", {"properties": {}}, {"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    },
}
HELPDESK["paths"]["/file_complaint"]["post"]["x-gecko-resource"] = {"resource": "ticket", "action": "create"}
HELPDESK["paths"]["/ping_tickets"]["post"]["x-gecko-resource"] = False

TASK = {"type": "object", "required": ["id", "text"], "properties": {"id": {"type": "integer"},
                                                                    "text": {"type": "string"}}}
TODO = {
    "openapi": "3.1.0",
    "info": {"title": "Todo", "version": "1", "x-gecko-default-state": {"tasks": [], "task_counter": 7}},
    "paths": {
        **_fn("add_task", {"required": ["text"], "properties": {"text": {"type": "string"}}}, TASK),
        **_fn("get_task", {"required": ["task_id"], "properties": {"task_id": {"type": "integer"}}},
              {"anyOf": [TASK, {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}},
                                "additionalProperties": False}]}, read=True),
    },
}

OWNER_PET = {"type": "object", "required": ["id", "name"], "properties": {
    "id": {"type": "integer", "minimum": 1}, "name": {"type": "string"}, "owner_id": {"type": "string"}}}
NESTED = {
    "openapi": "3.1.0",
    "info": {"title": "Kennel", "version": "1"},
    "paths": {"/owners/{ownerId}/pets": {
        "parameters": [{"name": "ownerId", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": {"operationId": "listOwnerPets", "responses": _ok({"type": "array", "items": OWNER_PET})},
        "post": {"operationId": "addOwnerPet", "requestBody": _body({
            "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}),
            "responses": _ok(OWNER_PET)},
    }},
}


@pytest.fixture
def world_client(make_client, tmp_path: Path):
    kits = tmp_path / "kits"
    kits.mkdir()
    for name, doc in {"helpdesk": HELPDESK, "todo": TODO, "kennel": NESTED}.items():
        (kits / f"{name}.json").write_text(json.dumps(doc))
    (kits / "petstore.yaml").write_text((EXAMPLE_TOOLKITS_DIR / "petstore.yaml").read_text())
    return make_client(schemas_dirs=[kits])


class Calls:
    """One session's calls, each 200 checked against the published response schema."""

    def __init__(self, client) -> None:
        self.client = client
        self.headers = {"X-Session-ID": client.post("/sessions", json={}).json()["session_id"]}
        self.checks: dict[tuple[str, str], Draft202012Validator] = {}

    def __call__(self, toolkit: str, tool: str, **arguments: Any):
        reply = self.client.post(f"/{toolkit}/{tool}", json=arguments, headers=self.headers)
        if 200 <= reply.status_code < 300 and reply.content:
            if (toolkit, tool) not in self.checks:
                listing = self.client.get(f"/toolkits/{toolkit}").json()["tools"]
                schema = next(t["response_schema"] for t in listing if t["name"] == tool)
                self.checks[toolkit, tool] = Draft202012Validator(schema or {})
            errors = list(self.checks[toolkit, tool].iter_errors(reply.json()))
            assert not errors, f"{toolkit}/{tool}: {errors[0].message}"
        return reply

    def state(self) -> dict[str, Any]:
        return self.client.get("/get-session-state", headers=self.headers).json()["state"]


def test_function_style_create_read_list_update_close_delete(world_client):
    call = Calls(world_client)
    created = call("helpdesk", "create_ticket", title="VPN down", priority=4, dry_run=False).json()
    tid = created["ticket_id"]
    assert created["title"] == "VPN down" and created["priority"] == 4 and tid != "T1"
    got = call("helpdesk", "get_ticket", ticket_id=tid).json()
    assert {k: got[k] for k in ("ticket_id", "title", "priority")} == {"ticket_id": tid, "title": "VPN down",
                                                                      "priority": 4}
    record = call.state()["helpdesk"]["tickets"][tid]
    assert "dry_run" not in record, "only the fields a ticket has are stored"
    listing = call("helpdesk", "list_tickets").json()
    assert sorted(t["ticket_id"] for t in listing["tickets"]) == sorted(["T1", tid]) and listing["count"] == 2
    assert [t["ticket_id"] for t in call("helpdesk", "list_tickets", limit=1).json()["tickets"]] == ["T1"]

    call("helpdesk", "update_ticket", ticket_id=tid, updates={"priority": 1})
    assert call("helpdesk", "get_ticket", ticket_id=tid).json()["priority"] == 1
    closed = call("helpdesk", "close_ticket", ticket_id=tid).json()
    assert closed["status"] == "closed" and call.state()["helpdesk"]["tickets"][tid]["status"] == "closed"
    assert [t["ticket_id"] for t in call("helpdesk", "list_tickets", status="closed").json()["tickets"]] == [tid]

    call("helpdesk", "delete_ticket", ticket_id=tid)
    version = world_client.get("/get-session-state", headers=call.headers).json()["version"]
    gone = call("helpdesk", "get_ticket", ticket_id=tid)
    assert gone.status_code == 404 and gone.headers["X-Gecko-Tool-Error"] == "true"
    assert isinstance(gone.json()["message"], str), "the declared 404 body"
    assert world_client.get("/get-session-state", headers=call.headers).json()["version"] == version
    history = world_client.get(f"/sessions/{call.headers['X-Session-ID']}/history").json()["calls"]
    assert history[-1]["status"] == 404 and history[-1]["tool_error"] is True


def test_default_state_seeds_records_and_a_missing_id_is_not_found(world_client):
    call = Calls(world_client)
    assert call("helpdesk", "get_ticket", ticket_id="T1").json()["title"] == "Printer jam"
    assert call("helpdesk", "get_ticket", ticket_id="T404").status_code == 404
    assert call("helpdesk", "update_ticket", ticket_id="T404", updates={"priority": 3}).status_code == 404
    assert call.state() == {}, "reads and refused updates leave the world unchanged"


def test_declared_binding_and_opt_out(world_client):
    tools = {t["name"]: t["world"] for t in world_client.get("/toolkits/helpdesk").json()["tools"]}
    assert tools["file_complaint"]["declared"] is True and tools["file_complaint"]["collection"] == "tickets"
    assert tools["close_ticket"] == {"resource": "ticket", "action": "update", "collection": "tickets",
                                     "id_field": "ticket_id", "id": "ticket_id", "status": "closed",
                                     "declared": False, "not_found": 404, "mode": "merge",
                                     "reason": "the name close_ticket (verb 'close', noun 'ticket')", "server_fields": ["status"]}
    assert tools["ping_tickets"] is None
    call = Calls(world_client)
    tid = call("helpdesk", "file_complaint", title="Noise").json()["ticket_id"]
    assert call.state()["helpdesk"]["tickets"][tid]["title"] == "Noise"
    assert call("helpdesk", "get_ticket", ticket_id=tid).json()["title"] == "Noise"


def test_counter_numbers_records_and_error_branch_reports_missing(world_client):
    call = Calls(world_client)
    first = call("todo", "add_task", text="a").json()
    second = call("todo", "add_task", text="b").json()
    assert (first["id"], second["id"]) == (7, 8)
    state = call.state()["todo"]
    assert state["task_counter"] == 9 and [t["text"] for t in state["tasks"]] == ["a", "b"]
    assert call("todo", "get_task", task_id=8).json() == {"id": 8, "text": "b"}
    missing = call("todo", "get_task", task_id=99)
    assert missing.status_code == 200 and set(missing.json()) == {"error"}, "the schema's own error branch"


def test_rest_get_after_post_list_and_delete(world_client):
    call = Calls(world_client)
    pet = call("petstore", "createPet", name="Rex", species="dog", age=3).json()
    got = world_client.get(f"/petstore/pets/{pet['id']}", headers=call.headers)
    assert got.status_code == 200 and {k: got.json()[k] for k in ("id", "name", "species", "age")} == {
        "id": pet["id"], "name": "Rex", "species": "dog", "age": 3}
    other = call("petstore", "createPet", name="Tom", species="cat").json()
    assert other["id"] != pet["id"]
    listed = world_client.get("/petstore/pets", params={"species": "cat"}, headers=call.headers).json()
    assert [p["name"] for p in listed] == ["Tom"]
    deleted = world_client.delete(f"/petstore/pets/{pet['id']}", headers=call.headers)
    assert deleted.status_code == 204 and deleted.content == b"", "the declared 204, with no body"
    gone = world_client.get(f"/petstore/pets/{pet['id']}", headers=call.headers)
    assert gone.status_code == 404 and set(gone.json()) == {"code", "message"}
    assert [p["name"] for p in world_client.get("/petstore/pets", headers=call.headers).json()] == ["Tom"]


def test_rest_nested_collection_lists_one_owner(world_client):
    call = Calls(world_client)
    call("kennel", "addOwnerPet", ownerId="ann", name="Rex")
    call("kennel", "addOwnerPet", ownerId="bob", name="Tom")
    assert [p["name"] for p in call("kennel", "listOwnerPets", ownerId="ann").json()] == ["Rex"]
    records = call.state()["kennel"]["pets"].values()
    assert sorted((r["owner_id"], r["name"]) for r in records) == [("ann", "Rex"), ("bob", "Tom")]


def test_same_state_same_answer(world_client):
    call = Calls(world_client)
    a = call("helpdesk", "create_ticket", title="x", priority=2).json()
    world_client.post("/set-session-state", json={"state": {}}, headers=call.headers)
    assert call("helpdesk", "create_ticket", title="x", priority=2).json() == a
    again = call("helpdesk", "create_ticket", title="x", priority=2).json()
    assert again["ticket_id"] != a["ticket_id"], "the same create in a new state is a new record"


def test_inference_on_the_bundled_examples_and_names():
    kits = load_toolkits([EXAMPLE_TOOLKITS_DIR]).toolkits
    pets = {op.operation_id: bindings_public(op) for op in kits["petstore"].operations.values()}
    assert {k: (v["action"], v["collection"]) for k, v in pets.items()} == {
        "listPets": ("list", "pets"), "createPet": ("create", "pets"), "showPetById": ("read", "pets"),
        "deletePet": ("delete", "pets")}
    assert pets["showPetById"]["id"] == "petId" and pets["showPetById"]["id_field"] == "id"
    orders = {op.operation_id: bindings_public(op) for op in kits["orders"].operations.values()}
    assert orders["place_order"]["action"] == "create" and orders["cancel_order"]["status"] == "cancelled"
    assert [singular(w) for w in ("tickets", "categories", "addresses", "status")] == [
        "ticket", "category", "address", "status"]
    assert [plural(w) for w in ("ticket", "category", "address", "day")] == ["tickets", "categories",
                                                                              "addresses", "days"]


def test_malformed_declaration_is_an_error():
    toolkit = build_toolkit(Path("helpdesk.json"), json.loads(json.dumps(HELPDESK)))
    toolkit.operations["create_ticket"].extensions["x-gecko-resource"] = {"resource": "ticket", "action": "explode"}
    with pytest.raises(ValueError, match="x-gecko-resource"):
        infer_world("helpdesk", toolkit.operations, None)
