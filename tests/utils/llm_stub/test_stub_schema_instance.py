"""The deterministic JSON-Schema instance generator."""

from __future__ import annotations

from typing import Any

import pytest

from utils.llm_stub.schema_instance import SchemaInstanceError, generate_instance, invalid_instance, is_valid

SCHEMAS: list[dict[str, Any]] = [
    {"type": "string", "minLength": 30},
    {"type": "string", "maxLength": 3},
    {"type": "string", "pattern": "^[A-Z]{2}-\\d{4}$"},
    {"type": "integer", "minimum": 10, "maximum": 12},
    {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 5},
    {"type": "number", "minimum": -1.5, "maximum": -1.0},
    {"type": ["null", "boolean"]},
    {"enum": ["a", "b", None]},
    {"const": {"x": 1}},
    {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": True},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
    {"type": "object", "minProperties": 2, "additionalProperties": {"type": "integer"}},
    {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
               {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]},
    {"oneOf": [{"type": "object", "properties": {"kind": {"const": "x"}}, "required": ["kind"],
                "additionalProperties": False},
               {"type": "object", "properties": {"code": {"type": "integer"}}, "required": ["code"],
                "additionalProperties": False}]},
    {"anyOf": [{"type": "null"}, {"type": "string", "format": "email"}]},
    {"type": "object", "properties": {f: {"type": "string", "format": f} for f in (
        "date", "date-time", "time", "email", "uuid", "uri", "ipv4", "ipv6", "hostname")},
     "required": ["date", "uuid"]},
    {"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}}, "required": ["tree"],
     "$defs": {"Node": {"type": "object", "properties": {"name": {"type": "string"},
                                                         "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                        "required": ["name"]}}},
    {"type": "string", "examples": ["hello"], "minLength": 2},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_generated_values_are_valid_and_deterministic(schema: dict[str, Any]) -> None:
    value = generate_instance(schema, seed="s1")
    assert is_valid(schema, value), value
    assert generate_instance(schema, seed="s1") == value


def test_seed_changes_values() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}
    values = {str(generate_instance(schema, seed=i)) for i in range(10)}
    assert len(values) > 1


def test_hints_are_echoed_when_they_fit() -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string"}, "count": {"type": "integer"}},
              "required": ["title", "count"]}
    value = generate_instance(schema, hints={"title": "Groceries", "count": "not an int"})
    assert value["title"] == "Groceries" and isinstance(value["count"], int)


@pytest.mark.parametrize("schema", SCHEMAS[:10])
def test_invalid_instance_is_invalid(schema: dict[str, Any]) -> None:
    assert not is_valid(schema, invalid_instance(schema))


def test_unsatisfiable() -> None:
    with pytest.raises(SchemaInstanceError):
        generate_instance(False)
    with pytest.raises(SchemaInstanceError):
        generate_instance({"$ref": "#/$defs/Missing"})
