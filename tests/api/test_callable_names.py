"""Every tool has a callable name (issue 33 item 6): an operationId with `/` (GitHub's `issues/create`) is called by
its alias or by itself as `POST /{toolkit}/{operationId}`, search and MCP list the alias, a 404 suggests it."""

from __future__ import annotations

import json

import pytest

from gecko.mcp.catalog import McpCatalog
from gecko.toolkits import load_toolkits
from gecko.toolkits.names import aliases

DOC = {"openapi": "3.1.0", "info": {"title": "Hub", "version": "1"}, "paths": {
    "/repos/{owner}/{repo}/issues": {"post": {
        "operationId": "issues/create", "summary": "Create an issue",
        "parameters": [{"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
                       {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["title"], "properties": {"title": {"type": "string"}}}}}},
        "responses": {"201": {"description": "created", "content": {"application/json": {"schema": {
            "type": "object", "required": ["number"], "properties": {"number": {"type": "integer"}}}}}}}}},
    "/issues_create": {"get": {"operationId": "issues_create", "responses": {"200": {"description": "ok"}}}},
    "/repos/{owner}/{repo}/pulls": {"get": {
        "operationId": "pulls/list",
        "parameters": [{"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
                       {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok"}}}}}}
ARGS = {"owner": "octo", "repo": "hello", "title": "Bug"}


@pytest.fixture
def hub(tmp_path, make_client):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "hub.json").write_text(json.dumps(DOC))
    client = make_client(schemas_dirs=[tmp_path / "docs"])
    return client, {"X-Session-ID": client.get("/session-id").json()["session_id"]}


def test_aliases_are_unique_within_a_toolkit():
    assert aliases(["issues/create", "issues_create", "pulls/list", "a b"]) == {
        "issues/create": "issues_create_2", "pulls/list": "pulls_list", "a b": "a_b"}


def test_a_slashed_operation_id_is_called_by_its_alias_and_by_itself(hub):
    client, session = hub
    by_alias = client.post("/hub/pulls_list", json={"owner": "o", "repo": "r"}, headers=session)
    assert by_alias.status_code == 200, by_alias.text
    by_id = client.post("/hub/pulls/list", json={"owner": "o", "repo": "r"}, headers=session)
    assert by_id.status_code == 200, by_id.text
    escaped = client.post("/hub/issues%2Fcreate", json=ARGS, headers=session)  # what the Python client sends
    assert escaped.is_success and escaped.json()["number"], escaped.text
    assert client.post("/hub/issues_create_2", json=ARGS, headers=session).is_success
    assert client.post("/hub/issues_create", json={}, headers=session).status_code == 200  # its own tool


def test_a_404_suggests_the_callable_name(hub):
    client, session = hub
    reply = client.post("/hub/pulls/lists", json={}, headers=session)
    assert reply.status_code == 404
    assert reply.json()["suggestions"] == ["pulls_list"]
    reply = client.post("/hub/pull_list", json={}, headers=session)
    assert reply.status_code == 404 and "pulls_list" in reply.json()["suggestions"]


def test_search_and_mcp_list_the_callable_name(hub, tmp_path):
    client, _ = hub
    hits = client.get("/tools/search", params={"q": "create an issue", "k": 3, "mode": "bm25"}).json()["hits"]
    hit = next(h for h in hits if h["name"] == "issues/create")
    assert hit["call_name"] == "issues_create_2" and hit["call"] == "POST /hub/issues_create_2"
    registry = load_toolkits([tmp_path / "docs"], cache_dir=tmp_path / "cache")
    names = {tool.name for tool in McpCatalog.for_toolkit(registry.toolkit("hub")).tools.values()}
    assert {"issues_create_2", "pulls_list", "issues_create"} == names
