"""OpenAI tool definitions and MCP tools/list results."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from gecko.convert import ConversionError, from_mcp, from_openai
from gecko.toolkits import ToolkitRegistry
from tests.convert.convert_support import EXAMPLES_DIR

PARAMS = {"type": "object", "properties": {"city": {"type": "string", "description": "City"}}, "required": ["city"]}


def body(doc: dict[str, Any], op_id: str) -> dict[str, Any]:
    return doc["paths"][f"/{op_id}"]["post"]["requestBody"]["content"]["application/json"]["schema"]


def result(doc: dict[str, Any], op_id: str) -> dict[str, Any]:
    return doc["paths"][f"/{op_id}"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]


@pytest.mark.parametrize("data", [
    {"type": "function", "function": {"name": "weather", "description": "d", "parameters": PARAMS}},
    {"name": "weather", "description": "d", "parameters": PARAMS},
    {"type": "function", "name": "weather", "description": "d", "parameters": PARAMS},
    [{"type": "function", "function": {"name": "weather", "description": "d", "parameters": PARAMS}}],
    {"tools": [{"type": "function", "function": {"name": "weather", "description": "d", "parameters": PARAMS}}]},
    {"functions": [{"name": "weather", "description": "d", "parameters": PARAMS}]},
])
def test_openai_shapes(data: Any) -> None:
    doc = from_openai(data, title="w")
    assert body(doc, "weather") == {**PARAMS, "additionalProperties": False}
    assert doc["paths"]["/weather"]["post"]["description"] == "d"


def test_openai_parameters_are_kept_exactly() -> None:
    params = {
        "type": "object",
        "properties": {"q": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"}, "n": {"type": ["integer", "null"]}},
        "required": ["q"],
        "additionalProperties": {"type": "string"},
    }
    doc = from_openai({"name": "s", "parameters": params}, title="t")
    assert body(doc, "s") == params


def test_openai_function_without_parameters() -> None:
    doc = from_openai({"name": "ping"}, title="t")
    assert body(doc, "ping") == {"type": "object", "properties": {}, "additionalProperties": False}


def test_openai_defs_move_to_components() -> None:
    data = json.loads((EXAMPLES_DIR / "weather.openai.json").read_text())
    doc = from_openai(data, title="weather")
    assert body(doc, "weather_alerts")["properties"]["region"] == {"$ref": "#/components/schemas/Region"}
    assert "Region" in doc["components"]["schemas"]
    assert "$defs" not in body(doc, "weather_alerts")


def test_clashing_definitions_get_a_namespace() -> None:
    def tool(name: str, region: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "parameters": {"type": "object", "properties": {"r": {"$ref": "#/$defs/R"}}, "$defs": {"R": region}}}

    doc = from_openai([tool("a", {"type": "string"}), tool("b", {"type": "integer"}), tool("c", {"type": "string"})], title="t")
    schemas = doc["components"]["schemas"]
    assert schemas == {"R": {"type": "string"}, "b.R": {"type": "integer"}}
    assert body(doc, "b")["properties"]["r"]["$ref"] == "#/components/schemas/b.R"
    assert body(doc, "c")["properties"]["r"]["$ref"] == "#/components/schemas/R"


@pytest.mark.parametrize(("data", "message"), [
    ({"type": "web_search"}, "only function tools"),
    ({"name": "f", "parameters": {"type": "array"}}, "must be an object schema"),
    ({"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "strng"}}}}, "invalid JSON Schema"),
    ({"name": "f", "parameters": {"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}}}, "unsupported \\$ref"),
    ({"description": "no name"}, "non-empty 'name'"),
    ([{"name": "f"}, {"name": "f"}], "duplicate tool names"),
])
def test_openai_refuses_what_it_cannot_convert(data: Any, message: str) -> None:
    with pytest.raises(ConversionError, match=message):
        from_openai(data, title="t")


def test_mcp_tools_list() -> None:
    data = json.loads((EXAMPLES_DIR / "notes.mcp.json").read_text())
    doc = from_mcp(data, title="notes")
    search = doc["paths"]["/search_notes"]["post"]
    assert search["summary"] == "Search notes"
    assert search["x-gecko-access"] == "read"
    assert search["x-gecko-response-origin"] == "source"
    assert search["x-mcp-annotations"] == {"readOnlyHint": True}
    assert "$schema" not in body(doc, "search_notes")
    assert result(doc, "search_notes")["required"] == ["hits"]
    create = doc["paths"]["/create_note"]["post"]
    assert create["x-gecko-access"] == "write"
    assert create["x-gecko-response-origin"] == "generic"


def test_mcp_accepts_the_bare_result_and_a_list() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {}}}
    assert from_mcp({"tools": [tool]}, title="x") == from_mcp([tool], title="x")


def test_mcp_access_unknown_without_a_hint_and_overridable() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object"}, "annotations": {"title": "T"}}
    doc = from_mcp([tool], title="x")
    assert "x-gecko-access" not in doc["paths"]["/t"]["post"]
    assert doc["paths"]["/t"]["post"]["summary"] == "T"
    assert from_mcp([tool], title="x", access={"t": "write"})["paths"]["/t"]["post"]["x-gecko-access"] == "write"


def test_draft07_items_become_prefix_items() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {
        "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False}}}}
    assert body(from_mcp([tool], title="x"), "t")["properties"]["pair"] == {
        "type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False}


def test_composed_parameters_are_closed_with_unevaluated_properties() -> None:
    params = {"type": "object", "allOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {"type": "integer"}}}]}
    schema = body(from_openai({"name": "f", "parameters": params}, title="t"), "f")
    assert schema["unevaluatedProperties"] is False and "additionalProperties" not in schema


def test_documents_load_in_the_server(load_docs: Callable[..., ToolkitRegistry]) -> None:
    weather = from_openai(json.loads((EXAMPLES_DIR / "weather.openai.json").read_text()), title="weather")
    notes = from_mcp(json.loads((EXAMPLES_DIR / "notes.mcp.json").read_text()), title="notes")
    registry = load_docs(weather=weather, notes=notes)
    op = registry.get("weather", "weather_current")
    assert op.original_name == "weather.current"
    assert op.args_validator.is_valid({"city": "Lisbon"})
    assert not op.args_validator.is_valid({"city": "Lisbon", "extra": 1})
    assert not op.args_validator.is_valid({})
    assert registry.get("notes", "search_notes").access == "read"
    assert registry.get("notes", "create_note").access == "write"
    alerts = registry.get("weather", "weather_alerts")
    assert alerts.args_validator.is_valid({"region": {"country": "PT"}})
    assert not alerts.args_validator.is_valid({"region": {}})
