"""MCP tool listings built from toolkits: names, schemas, annotations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gecko.mcp.catalog import McpCatalog, McpCatalogs, mcp_name, output_schema, portable
from gecko.toolkits.loader import load_toolkits
from gecko.toolkits.registry import ToolNotFound
from tests.conftest import TOOLKITS_DIR


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    return load_toolkits([TOOLKITS_DIR], cache_dir=tmp_path_factory.mktemp("cache"))


def test_names_are_valid_mcp_names():
    assert mcp_name("math.factorial") == "math.factorial"
    assert mcp_name("weird name/with:chars") == "weird_name_with_chars"
    long = mcp_name("x" * 300)
    assert len(long) == 128 and long != mcp_name("x" * 301)


def test_toolkit_endpoint_uses_own_names_and_all_endpoint_prefixes(registry):
    catalogs = McpCatalogs(registry)
    assert set(catalogs.get("notes").tools) == {"create_note", "get_note", "list_notes"}
    everything = catalogs.get(None).tools
    assert "notes__create_note" in everything and "legacy30__getAccount" in everything
    assert catalogs.get("notes") is catalogs.get("notes")
    with pytest.raises(ToolNotFound) as missing:
        catalogs.get("note")
    assert missing.value.suggestions == ["notes"]


def test_listing_carries_schemas_and_annotations(registry):
    catalog = McpCatalog.for_toolkit(registry.toolkit("notes"))
    listed = {t.name: t for t in catalog.listing}
    create, read = listed["create_note"], listed["get_note"]
    assert create.inputSchema == portable(registry.toolkit("notes").operations["create_note"].args_schema)
    assert (create.annotations.readOnlyHint, create.annotations.destructiveHint) == (False, True)
    assert (read.annotations.readOnlyHint, read.annotations.destructiveHint) == (True, False)
    assert create.outputSchema["type"] == "object" and len(create.outputSchema["oneOf"]) == 2
    assert read.outputSchema["type"] == "object" and read.outputSchema["$ref"].startswith("#/$defs/")


def test_output_schema_only_for_object_results_the_source_declared(registry):
    op = registry.toolkit("notes").operations["list_notes"]
    assert output_schema(op) == portable(op.response_schema)
    assert output_schema(replace(op, response_schema={"type": "array", "items": {"type": "string"}})) is None
    either = {"anyOf": [{"type": "object"}, {"type": "string"}]}
    assert output_schema(replace(op, response_schema=either)) is None
    generic = replace(op, extensions={"x-gecko-response-origin": "generic"})
    assert output_schema(generic) is None


def test_unknown_tool_suggests_names(registry):
    catalog = McpCatalog.for_toolkit(registry.toolkit("notes"))
    with pytest.raises(ToolNotFound) as missing:
        catalog.get("create_notes")
    assert missing.value.suggestions[0] == "create_note"


def test_portable_spells_boolean_subschemas_as_objects():
    schema = {"type": "object", "additionalProperties": False,
              "properties": {"pair": {"type": "array", "prefixItems": [True, {"type": "string"}], "items": False},
                             "any": True},
              "$defs": {"never": False}}
    assert portable(schema) == {
        "type": "object", "additionalProperties": False,
        "properties": {"pair": {"type": "array", "prefixItems": [{}, {"type": "string"}], "items": {"not": {}}},
                       "any": {}},
        "$defs": {"never": {"not": {}}}}
    assert schema["properties"]["pair"]["items"] is False, "the operation's own schema is left as it is"
