from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gecko.toolkits import ToolkitLoadError, load_toolkits
from gecko.toolkits.access import first_verb, operation_access
from gecko.toolkits.registry import MethodNotAllowed, ToolNotFound
from tests.conftest import INVALID_DIR, TOOLKITS_DIR


@pytest.fixture(scope="module")
def registry():
    return load_toolkits([TOOLKITS_DIR])


def test_loads_every_toolkit_with_kinds(registry):
    notes = registry.toolkit("notes")
    assert set(notes.operations) == {"create_note", "get_note", "list_notes"}
    assert notes.operations["create_note"].access == "write"
    assert notes.operations["get_note"].access == "read"  # declared
    assert notes.operations["list_notes"].access == "read"  # GET
    assert notes.default_state == {"notebooks": ["inbox"]}
    legacy = registry.toolkit("legacy30")
    assert legacy.operations["getAccount"].access == "read"
    assert legacy.operations["updateAccount"].access == "write"


def test_title_slug_is_an_alias(registry):
    assert registry.toolkit("legacy-thirty") is registry.toolkit("legacy30")


def test_openapi_30_is_normalised(registry):
    op = registry.get("legacy30", "updateAccount")
    assert op.args_validator.is_valid({"accountId": 3, "nickname": None, "balance": 1})
    assert not op.args_validator.is_valid({"accountId": 3, "balance": 0})  # exclusiveMinimum: true + minimum 0
    assert not op.args_validator.is_valid({"accountId": 3, "nickname": "x" * 21})
    assert op.response_validator.is_valid({"id": 1, "nickname": None, "balance": 2.5, "kind": None})


def test_path_level_parameters_are_merged(registry):
    op = registry.get("legacy30", "getAccount")
    names = {p.name: p.location for p in op.parameters}
    assert names == {"accountId": "path", "verbose": "query"}
    assert op.args_schema["required"] == ["accountId"]


def test_recursive_refs_compile(registry):
    op = registry.get("notes", "list_notes")
    assert op.response_validator.is_valid({"notes": [], "count": 0, "tree": {"name": "a", "children": [{"name": "b"}]}})
    assert not op.response_validator.is_valid({"notes": [], "count": 0, "tree": {"children": []}})


def test_unknown_tool_lists_nearest_names(registry):
    with pytest.raises(ToolNotFound) as info:
        registry.get("notes", "create_nte")
    assert "create_note" in info.value.suggestions
    with pytest.raises(ToolNotFound) as info:
        registry.get("nots", "create_note")
    assert "notes" in info.value.suggestions


def test_path_matching_is_strict(registry):
    match = registry.match_path("GET", "/accounts/12")
    assert match.operation.operation_id == "getAccount" and match.path_params == {"accountId": "12"}
    assert registry.match_path("GET", "/legacy30/accounts/12").operation.operation_id == "getAccount"
    with pytest.raises(MethodNotAllowed) as info:
        registry.match_path("DELETE", "/accounts/12")
    assert info.value.allowed == ["GET", "PATCH"]
    assert registry.match_path("GET", "/nothing/here") is None


def test_missing_dir_is_a_clear_error(tmp_path):
    with pytest.raises(ToolkitLoadError, match="does not exist"):
        load_toolkits([tmp_path / "nope"])


def test_invalid_document_names_file_and_problem():
    with pytest.raises(ToolkitLoadError) as info:
        load_toolkits([INVALID_DIR])
    assert "broken.json" in str(info.value) and "--skip-invalid" in str(info.value)


def test_skip_invalid_keeps_the_valid_ones(tmp_path):
    for src in [*TOOLKITS_DIR.iterdir(), *INVALID_DIR.iterdir()]:
        (tmp_path / src.name).write_bytes(src.read_bytes())
    (tmp_path / "notyaml.yaml").write_text("a: [unclosed")
    (tmp_path / "swagger.json").write_text(json.dumps({"swagger": "2.0"}))
    registry = load_toolkits([tmp_path], skip_invalid=True)
    assert set(registry.toolkits) == {"notes", "legacy30"}


def test_priority_order_first_dir_wins(tmp_path):
    doc = json.loads((TOOLKITS_DIR / "notes.json").read_text())
    doc["paths"] = {"/only": {"post": {"operationId": "only", "responses": {"200": {"description": "ok"}}}}}
    (tmp_path / "notes.json").write_text(json.dumps(doc))
    registry = load_toolkits([tmp_path, TOOLKITS_DIR])
    assert set(registry.toolkit("notes").operations) == {"only"}


def test_validation_cache_skips_revalidation(tmp_path, monkeypatch):
    load_toolkits([TOOLKITS_DIR], cache_dir=tmp_path)
    import gecko.toolkits.loader as loader

    def boom(doc):
        raise AssertionError("validated again")

    monkeypatch.setattr(loader, "spec_errors", boom)
    load_toolkits([TOOLKITS_DIR], cache_dir=tmp_path)


@pytest.mark.parametrize(("name", "method", "declared", "kind"), [
    ("get_user", "post", None, "read"),
    ("listPets", "post", None, "read"),
    ("triangle_properties.get", "post", None, "read"),
    ("book_flight", "post", None, "write"),
    ("anything", "get", None, "read"),
    ("get_user", "post", "write", "write"),
    ("create", "delete", None, "write"),
])
def test_access_kind(name, method, declared, kind):
    op = {"x-gecko-access": declared} if declared else {}
    assert operation_access(op, method, name) == kind


def test_first_verb():
    assert first_verb("searchHotels") == "search"
    assert first_verb("math.factorial") == "factorial"


def test_large_spec_loads_fast(tmp_path):
    """A synthetic 1,000-operation spec: start-up work (parse, validate, compile) stays well under 5 s."""
    paths = {}
    schemas = {f"Thing{i}": {"type": "object", "properties": {"id": {"type": "string"}, "n": {"type": "integer"},
                                                               "next": {"$ref": f"#/components/schemas/Thing{(i + 1) % 50}"}}}
               for i in range(50)}
    for i in range(1000):
        paths[f"/things{i}/{{thingId}}"] = {"get": {
            "operationId": f"getThing{i}", "parameters": [{"name": "thingId", "in": "path", "required": True,
                                                            "schema": {"type": "string"}}],
            "responses": {"200": {"description": "ok", "content": {"application/json": {
                "schema": {"$ref": f"#/components/schemas/Thing{i % 50}"}}}}}}}
    doc = {"openapi": "3.1.0", "info": {"title": "Big", "version": "1"}, "paths": paths,
           "components": {"schemas": schemas}}
    (tmp_path / "big.json").write_text(json.dumps(doc))
    started = time.perf_counter()
    registry = load_toolkits([tmp_path])
    assert registry.tool_count == 1000
    assert time.perf_counter() - started < 15  # generous for a loaded CI box; perf/ measures the real figure


def test_external_ref_is_a_clear_error(tmp_path):
    doc = {"openapi": "3.1.0", "info": {"title": "Ext", "version": "1"}, "paths": {"/x": {"post": {
        "operationId": "x", "responses": {"200": {"description": "ok", "content": {"application/json": {
            "schema": {"$ref": "other.json#/Thing"}}}}}}}}}
    (tmp_path / "ext.json").write_text(json.dumps(doc))
    with pytest.raises(ToolkitLoadError):
        load_toolkits([tmp_path], cache_dir=Path(tmp_path / "c"))
