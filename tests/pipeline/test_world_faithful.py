"""A simulated record holds what a real server would hold (issue 32): one test per class of unfaithfulness, each
failing on the world model before it (which stored generated optional fields, merged on PUT, answered 200 for
every success, filled reads with random fields, ignored page sizes it had no name for, and bound reads as creates).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

NOTE = {"type": "object", "required": ["id", "title", "created_at"], "properties": {
    "id": {"type": "integer", "readOnly": True},
    "title": {"type": "string"},
    "body": {"type": "string"},
    "color": {"type": "string", "enum": ["red", "green", "blue"]},
    "pinned": {"type": "boolean", "default": False},
    "created_at": {"type": "string", "format": "date-time", "readOnly": True}}}
NEW_NOTE = {"type": "object", "required": ["title"], "additionalProperties": False, "properties": {
    "title": {"type": "string", "minLength": 1}, "body": {"type": "string"},
    "color": {"type": "string", "enum": ["red", "green", "blue"]}, "pinned": {"type": "boolean", "default": False}}}
ID = {"name": "noteId", "in": "path", "required": True, "schema": {"type": "integer"}}
MISSING = {"404": {"description": "no such note", "content": {"application/json": {"schema": {
    "type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}}}}}}


def _json(schema: Any) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


NOTES = {
    "openapi": "3.1.0",
    "info": {"title": "Notes", "version": "1"},
    "paths": {
        "/notes": {
            "get": {"operationId": "listNotes", "parameters": [
                {"name": "pageSize", "in": "query", "description": "Maximum number of notes to return.",
                 "schema": {"type": "integer", "minimum": 1}},
                {"name": "skip", "in": "query", "schema": {"type": "integer", "minimum": 0}},
                {"name": "sortBy", "in": "query", "schema": {"type": "string"}},
                {"name": "direction", "in": "query", "schema": {"type": "string", "enum": ["asc", "desc"]}},
                {"name": "color", "in": "query", "schema": {"type": "string"}},
                {"name": "fuzz", "in": "query", "description": "Reserved.", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "notes", "content": _json({"type": "array", "items": NOTE})}}},
            "post": {"operationId": "createNote", "requestBody": {"required": True, "content": _json(NEW_NOTE)},
                     "responses": {"201": {"description": "created", "headers": {"Location": {"schema": {
                         "type": "string"}}}, "content": _json(NOTE)}}}},
        "/notes/{noteId}": {
            "get": {"operationId": "getNote", "parameters": [ID],
                    "responses": {"200": {"description": "the note", "content": _json(NOTE)}, **MISSING}},
            "put": {"operationId": "replaceNote", "parameters": [ID],
                    "requestBody": {"required": True, "content": _json(NEW_NOTE)},
                    "responses": {"200": {"description": "replaced", "content": _json(NOTE)}, **MISSING}},
            "patch": {"operationId": "patchNote", "parameters": [ID],
                      "requestBody": {"required": True, "content": {"application/merge-patch+json": {"schema": {
                          "type": "object", "properties": {"body": {"type": ["string", "null"]},
                                                           "color": {"type": ["string", "null"]},
                                                           "title": {"type": "string"}}}}}},
                      "responses": {"200": {"description": "patched", "content": _json(NOTE)}, **MISSING}},
            "delete": {"operationId": "deleteNote", "parameters": [ID],
                       "responses": {"204": {"description": "deleted"}, **MISSING}}}},
}

ORDER = {"type": "object", "required": ["order_id", "item", "status", "currency"], "properties": {
    "order_id": {"type": "string"}, "item": {"type": "string"},
    "status": {"type": "string", "enum": ["delivered", "cancelled", "placed", "shipped"]},
    "currency": {"type": "string", "enum": ["EUR", "USD", "GBP", "JPY"]}}}
SHOP = {
    "openapi": "3.1.0",
    "info": {"title": "Shop", "version": "1", "x-gecko-default-state": {"currency": "GBP", "orders": {}}},
    "paths": {
        "/place_order": {"post": {"operationId": "place_order", "requestBody": {"required": True, "content": _json({
            "type": "object", "required": ["item"], "properties": {"item": {"type": "string"}}})},
            "responses": {"200": {"description": "placed", "content": _json(ORDER)}}}},
        "/open_order_details": {"post": {"operationId": "open_order_details", "requestBody": {
            "required": True, "content": _json({"type": "object", "required": ["order_id"],
                                                "properties": {"order_id": {"type": "string"}}})},
            "responses": {"200": {"description": "the order", "content": _json(ORDER)}}}},
    },
}

BOOK = {"type": "object", "required": ["id", "title", "isbn"], "properties": {
    "id": {"type": "string"}, "title": {"type": "string"}, "isbn": {"type": "string"},
    "subtitle": {"type": "string"}, "color": {"type": "string"}}}
LIBRARY = {
    "openapi": "3.1.0",
    "info": {"title": "Library", "version": "1", "x-gecko-default-state": {
        "books": {"b1": {"id": "b1", "title": "Dune"}}}},
    "paths": {"/books/{bookId}": {"get": {"operationId": "getBook", "parameters": [
        {"name": "bookId", "in": "path", "required": True, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "a book", "content": _json(BOOK)}}}}},
}

PETS = {
    "openapi": "3.1.0",
    "info": {"title": "Zoo", "version": "1"},
    "paths": {"/animals/{animalId}": {"get": {"operationId": "getAnimal", "parameters": [
        {"name": "animalId", "in": "path", "required": True, "schema": {"type": "integer"}}],
        "responses": {"200": {"description": "an animal", "content": _json({
            "type": "object", "required": ["id", "name"], "properties": {
                "id": {"type": "integer"}, "name": {"type": "string"}}})}}}}},
}


@pytest.fixture
def client(make_client, tmp_path: Path):
    folder = tmp_path / "toolkits"
    folder.mkdir()
    for name, doc in (("notes", NOTES), ("shop", SHOP), ("zoo", PETS), ("library", LIBRARY)):
        (folder / f"{name}.json").write_text(json.dumps(doc))
    return make_client(schemas_dirs=[folder])


class Session:
    """One session's calls over the documents' own routes; every success with a body is checked against the
    operation's published response schema."""

    def __init__(self, client) -> None:
        self.client = client
        self.headers = {"X-Session-ID": client.post("/sessions", json={}).json()["session_id"]}
        self.schemas = {t["name"]: t["response_schema"] for name in ("notes", "shop", "zoo", "library")
                        for t in client.get(f"/toolkits/{name}").json()["tools"]}

    def http(self, method: str, path: str, tool: str, **kwargs: Any):
        reply = self.client.request(method, path, headers=self.headers, **kwargs)
        if 200 <= reply.status_code < 300 and reply.content:
            errors = list(Draft202012Validator(self.schemas[tool] or {}).iter_errors(reply.json()))
            assert not errors, f"{tool}: {errors[0].message}"
        return reply

    def call(self, toolkit: str, tool: str, **arguments: Any):
        return self.http("POST", f"/{toolkit}/{tool}", tool, json=arguments)

    def records(self, toolkit: str, collection: str) -> dict[str, Any]:
        state = self.client.get("/get-session-state", headers=self.headers).json()["state"]
        return state[toolkit][collection]


def test_a_create_stores_only_what_was_sent_and_what_the_server_makes(client):
    s = Session(client)
    reply = s.http("POST", "/notes/notes", "createNote", json={"title": "a"})
    note = reply.json()
    assert set(note) == {"id", "title", "created_at", "pinned"}, "no body, no color: nobody sent them"
    assert note["pinned"] is False, "the declared default"
    assert s.records("notes", "notes") == {str(note["id"]): note}, "the state holds exactly what was answered"


def test_a_create_answers_201_with_its_location_and_a_delete_204_without_a_body(client):
    s = Session(client)
    created = s.http("POST", "/notes/notes", "createNote", json={"title": "a"})
    assert created.status_code == 201
    assert created.headers["Location"] == f"/notes/{created.json()['id']}"
    deleted = s.http("DELETE", f"/notes/notes/{created.json()['id']}", "deleteNote")
    assert deleted.status_code == 204 and deleted.content == b""
    assert s.http("GET", f"/notes/notes/{created.json()['id']}", "getNote").status_code == 404


def test_put_replaces_and_a_merge_patch_merges(client):
    s = Session(client)
    note = s.http("POST", "/notes/notes", "createNote", json={"title": "a", "body": "x", "color": "red"}).json()
    replaced = s.http("PUT", f"/notes/notes/{note['id']}", "replaceNote", json={"title": "b"}).json()
    assert replaced == {"id": note["id"], "title": "b", "created_at": note["created_at"], "pinned": False}, \
        "body and color were not sent: gone; id and created_at are the server's"
    patched = s.http("PATCH", f"/notes/notes/{note['id']}", "patchNote", json={"color": "blue"}).json()
    assert patched["color"] == "blue" and patched["title"] == "b", "a patch merges"
    cleared = s.http("PATCH", f"/notes/notes/{note['id']}", "patchNote", json={"color": None}).json()
    assert "color" not in cleared, "null removes a member (RFC 7396)"
    assert s.records("notes", "notes")[str(note["id"])] == cleared


def test_reads_show_the_record_and_agree_across_reads(client):
    s = Session(client)
    note = s.http("POST", "/notes/notes", "createNote", json={"title": "a"}).json()
    first = s.http("GET", f"/notes/notes/{note['id']}", "getNote").json()
    second = s.http("GET", f"/notes/notes/{note['id']}", "getNote").json()
    listed = s.http("GET", "/notes/notes", "listNotes").json()
    assert first == second == note == listed[0], "no field the record does not have, on any read"


def test_a_seeded_record_shows_no_invented_field_and_the_same_in_every_session(client):
    reads = [Session(client).http("GET", "/library/books/b1", "getBook").json() for _ in range(2)]
    assert reads[0] == reads[1], "a required field the seed lacks is generated from the record, not the session"
    assert set(reads[0]) == {"id", "title", "isbn"} and reads[0]["title"] == "Dune", "no optional field appears"


def test_a_page_size_is_honoured_whatever_it_is_called(client):
    s = Session(client)
    for title, color in (("c", "red"), ("a", "blue"), ("b", "red")):
        s.http("POST", "/notes/notes", "createNote", json={"title": title, "color": color})
    listed = s.http("GET", "/notes/notes", "listNotes", params={"pageSize": 2}).json()
    assert [n["title"] for n in listed] == ["c", "a"], "pageSize is described as a maximum number"
    page = s.http("GET", "/notes/notes", "listNotes", params={"skip": 1, "pageSize": 1}).json()
    assert [n["title"] for n in page] == ["a"]
    ordered = s.http("GET", "/notes/notes", "listNotes", params={"sortBy": "title", "direction": "desc"}).json()
    assert [n["title"] for n in ordered] == ["c", "b", "a"]
    assert [n["title"] for n in s.http("GET", "/notes/notes", "listNotes", params={"color": "red"}).json()] == \
        ["c", "b"]
    binding = next(t["world"] for t in client.get("/toolkits/notes").json()["tools"] if t["name"] == "listNotes")
    assert binding["query"] == {"limit": "pageSize", "offset": "skip", "sort": "sortBy", "order": "direction"}
    assert binding["ignored_arguments"] == ["fuzz"], "what Gecko cannot interpret, it says"
    s.http("GET", "/notes/notes", "listNotes", params={"fuzz": "x"})
    history = client.get(f"/sessions/{s.headers['X-Session-ID']}/history").json()["calls"]
    assert "fuzz" in history[-1]["notes"][0] and "ignored" in history[-1]["notes"][0], "and says so on the call"


def test_a_fresh_record_starts_where_a_create_leaves_it(client):
    s = Session(client)
    order = s.call("shop", "place_order", item="lamp").json()
    assert order["status"] == "placed", "a just-placed order is placed, not delivered"
    assert order["currency"] == "GBP", "the toolkit's state fixes the currency"
    assert s.records("shop", "orders")[order["order_id"]] == order


def test_a_read_named_like_a_create_never_creates(client):
    s = Session(client)
    order = s.call("shop", "place_order", item="lamp").json()
    shown = s.call("shop", "open_order_details", order_id=order["order_id"])
    assert shown.status_code == 200 and shown.json() == order
    s.call("shop", "open_order_details", order_id="nope")
    assert list(s.records("shop", "orders")) == [order["order_id"]], "opening details created no order"
    state = client.get("/get-session-state", headers=s.headers).json()["state"]
    assert "effects" not in state and set(state["counts"]) == {"shop/place_order"}, "nor was it counted as a write"
    binding = next(t["world"] for t in client.get("/toolkits/shop").json()["tools"]
                   if t["name"] == "open_order_details")
    assert binding["action"] == "read" and "only arguments are ids" in binding["reason"]


def test_an_unknown_collection_echoes_the_requested_id(client):
    s = Session(client)
    assert s.http("GET", "/zoo/animals/7", "getAnimal").json()["id"] == 7


def test_explain_prints_each_binding_and_why(tmp_path: Path, capsys):
    from gecko.toolkits.explain import main

    path = tmp_path / "shop.json"
    path.write_text(json.dumps(SHOP))
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "open_order_details  (POST /open_order_details, read, answers 200)" in out
    assert "read order in 'orders'" in out and "its only arguments are ids, so it reads" in out
    assert main([str(tmp_path / "missing.json")]) == 1


def test_a_never_issued_id_answers_in_the_tools_own_convention(make_client, tmp_path: Path):
    folder = tmp_path / "twin"
    folder.mkdir()
    doc = json.loads(json.dumps(PETS))
    get = doc["paths"]["/animals/{animalId}"]["get"]
    get["responses"]["404"] = MISSING["404"]
    get["x-gecko-error-convention"] = {"kind": "isError", "not_found": "Animal not found: {id}",
                                       "id_argument": "animalId"}
    doc["info"]["x-gecko-default-state"] = {"animals": {}}
    (folder / "zoo.json").write_text(json.dumps(doc))
    client = make_client(schemas_dirs=[folder])
    sid = client.post("/sessions", json={}).json()["session_id"]
    reply = client.get("/zoo/animals/9", headers={"X-Session-ID": sid})
    assert reply.status_code == 404 and reply.json()["message"] == "Animal not found: 9"
