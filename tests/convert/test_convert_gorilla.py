"""BFCL (Gorilla) function docs: the type mapping and the repairs that keep declarations satisfiable."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gecko.convert import ConversionError, from_bfcl
from gecko.convert.bfcl import bfcl_tool, bfcl_tools
from gecko.convert.gorilla import gorilla_schema


def convert(node: dict[str, Any], close: bool = True) -> dict[str, Any]:
    return gorilla_schema(node, "t", close_objects=close)


@pytest.mark.parametrize(("gorilla", "json_type"), [
    ("string", "string"), ("integer", "integer"), ("float", "number"), ("boolean", "boolean"),
    ("array", "array"), ("tuple", "array"), ("dict", "object"),
    ("object", "object"), ("number", "number"), ("null", "null"),
])
def test_type_mapping(gorilla: str, json_type: str) -> None:
    assert convert({"type": gorilla, "description": "d"}) == {"type": json_type, "description": "d"}


def test_any_has_no_type_and_accepts_everything() -> None:
    schema = convert({"type": "any", "description": "anything"})
    assert schema == {"description": "anything"}
    for value in (1, "x", None, [1], {"a": 1}):
        assert Draft202012Validator(schema).is_valid(value)


def test_float_accepts_integers_like_bfcl() -> None:
    assert Draft202012Validator(convert({"type": "float"})).is_valid(3)


def test_unknown_type_is_refused() -> None:
    with pytest.raises(ConversionError, match="unknown type 'str'"):
        convert({"type": "str"})


def test_tuple_items_and_positional_items() -> None:
    assert convert({"type": "tuple", "items": {"type": "float"}}) == {"type": "array", "items": {"type": "number"}}
    fixed = convert({"type": "tuple", "items": [{"type": "integer"}, {"type": "string"}]})
    assert fixed == {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}


def test_nested_dicts_with_properties_are_closed_others_stay_open() -> None:
    schema = convert({
        "type": "dict",
        "properties": {
            "prefs": {"type": "dict", "properties": {"size": {"type": "string", "enum": ["S", "L"]}}, "required": ["size"]},
            "free": {"type": "dict", "description": "any keys"},
            "counts": {"type": "dict", "required": ["adults"], "description": "keys named but not declared"},
            "rows": {"type": "array", "items": {"type": "dict", "properties": {"id": {"type": "integer"}}}},
        },
        "required": ["prefs"],
    })
    props = schema["properties"]
    assert props["prefs"]["additionalProperties"] is False
    assert props["prefs"]["required"] == ["size"]
    assert "additionalProperties" not in props["free"]
    assert "additionalProperties" not in props["counts"] and props["counts"]["required"] == ["adults"]
    assert props["rows"]["items"]["additionalProperties"] is False
    assert schema["additionalProperties"] is False


def test_response_blocks_are_not_closed() -> None:
    schema = convert({"type": "dict", "properties": {"id": {"type": "integer"}}}, close=False)
    assert "additionalProperties" not in schema


def test_defaults_descriptions_and_bounds_are_kept_verbatim() -> None:
    node = {"type": "boolean", "description": "flag", "default": "false", "format": "x"}
    assert convert(node) == {"type": "boolean", "description": "flag", "default": "false", "format": "x"}
    assert convert({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3})["maxItems"] == 3


def test_non_schema_keys_keep_an_x_prefix() -> None:
    assert convert({"type": "string", "optional": True}) == {"type": "string", "x-optional": True}


def test_enum_that_contradicts_its_type_becomes_any_of() -> None:
    schema = convert({"type": "boolean", "description": "free?", "enum": ["True", "False", "dontcare"], "default": "dontcare"})
    assert schema == {
        "description": "free?", "default": "dontcare",
        "anyOf": [{"type": "boolean"}, {"enum": ["True", "False", "dontcare"]}],
    }
    validator = Draft202012Validator(schema)
    assert validator.is_valid(True) and validator.is_valid("dontcare") and not validator.is_valid("maybe")


def test_enum_that_fits_its_type_is_kept() -> None:
    assert convert({"type": "integer", "enum": [1, 2]}) == {"type": "integer", "enum": [1, 2]}


def test_enum_on_an_array_constrains_its_items() -> None:
    schema = convert({"type": "array", "items": {"type": "string"}, "enum": ["a", "b"]})
    assert schema == {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
    assert Draft202012Validator(schema).is_valid(["a", "b", "a"])


def test_function_doc_becomes_a_tool() -> None:
    tool = bfcl_tool({
        "name": "spotify.play",
        "description": "Play songs.",
        "parameters": {"type": "dict", "properties": {"artist": {"type": "string"}, "duration": {"type": "integer"}},
                       "required": ["artist"]},
    })
    assert tool.name == "spotify.play" and tool.response is None and tool.access is None
    assert tool.parameters["required"] == ["artist"]
    assert list(tool.parameters["properties"]) == ["artist", "duration"]


def test_multi_turn_response_block_becomes_the_result() -> None:
    tool = bfcl_tool({
        "name": "cd", "description": "Change directory.",
        "parameters": {"type": "dict", "properties": {"folder": {"type": "string"}}, "required": ["folder"]},
        "response": {"type": "dict", "properties": {"current_working_directory": {"type": "string", "description": "cwd"}}},
    }, access="write")
    assert tool.response == {"type": "object", "properties": {"current_working_directory": {"type": "string", "description": "cwd"}}}
    assert tool.access == "write"


def test_task_entries_and_lists_are_unwrapped() -> None:
    doc = {"name": "f", "parameters": {"type": "dict", "properties": {}}}
    assert [t.name for t in bfcl_tools({"id": "x_0", "question": [], "function": [doc, {**doc, "name": "g"}]})] == ["f", "g"]
    assert [t.name for t in bfcl_tools([doc])] == ["f"]


def test_parameters_must_be_a_dict() -> None:
    with pytest.raises(ConversionError, match="type 'dict'"):
        bfcl_tool({"name": "f", "parameters": {"type": "array"}})


def test_whole_document_is_valid_and_keeps_original_names() -> None:
    doc = from_bfcl([
        {"name": "math.factorial", "description": "n!", "parameters": {"type": "dict", "properties": {"number": {"type": "integer"}}, "required": ["number"]}},
        {"name": "geo.point", "description": "", "parameters": {"type": "dict", "properties": {"xy": {"type": "tuple", "items": {"type": "float"}}}, "required": []}},
    ], title="simple_python_0")
    op = doc["paths"]["/math_factorial"]["post"]
    assert op["x-gecko-original-name"] == "math.factorial"
    assert op["requestBody"]["required"] is True
    assert op["x-gecko-response-origin"] == "generic"
