"""The one JSON-Schema instance generator (Gecko's rules synthesizer and the LLM stub use it)."""

from __future__ import annotations

import pytest

from utils.schema.instance import (
    InstanceGenerator,
    SchemaCache,
    UnsatisfiableSchema,
    generate_instance,
    generate_member,
    is_error_branch,
    is_valid,
)

SCHEMAS = [
    {"type": "integer", "minimum": 5, "maximum": 5},
    {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3, "multipleOf": 2},
    {"type": "number", "minimum": -1.5, "maximum": -1.25},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.1},
    {"type": "string", "minLength": 12, "maxLength": 12},
    {"type": "string", "pattern": "^[A-Z]{3}-\\d{2,4}$"},
    {"type": "string", "format": "date"}, {"type": "string", "format": "date-time"},
    {"type": "string", "format": "email"}, {"type": "string", "format": "uuid"},
    {"type": "string", "format": "uri"}, {"type": "string", "format": "ipv4"}, {"type": "string", "format": "ipv6"},
    {"type": "string", "format": "time"}, {"type": "string", "format": "hostname"},
    {"enum": ["a", 1, None]}, {"const": {"k": [1]}},
    {"type": ["null", "boolean"]},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3}, "minItems": 4, "uniqueItems": True},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": False, "minItems": 2},
    {"type": "array", "contains": {"const": 7}, "maxItems": 2},
    {"type": "object", "minProperties": 3, "additionalProperties": {"type": "integer"}},
    {"type": "object", "maxProperties": 1, "required": ["a"], "properties": {"a": {}, "b": {}, "c": {}}},
    {"oneOf": [{"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
               {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}]},
    {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}]},
    {"allOf": [{"type": "object", "required": ["a"], "properties": {"a": {"type": "integer", "minimum": 3}}},
               {"required": ["b"], "properties": {"b": {"type": "string", "format": "email"}}}]},
    {"$defs": {"node": {"type": "object", "required": ["v"], "properties": {
        "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
     "$ref": "#/$defs/node"},
    {"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}}, "required": ["tree"],
     "$defs": {"Node": {"type": "object", "required": ["name"], "properties": {
         "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}},
    {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "integer", "minimum": 2}, "b": {
        "$ref": "#/properties/a"}}},
    {"type": "object", "properties": {f: {"type": "string", "format": f} for f in (
        "date", "date-time", "time", "email", "uuid", "uri", "ipv4", "ipv6", "hostname")},
     "required": ["date", "uuid"]},
    {"type": "string", "examples": ["hello"], "minLength": 2},
    {"type": "object", "required": ["user_id", "confirmation_code", "id"], "properties": {
        "user_id": {"type": "string"}, "confirmation_code": {"type": "string"}, "id": {"type": "integer"}}},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=[str(i) for i in range(len(SCHEMAS))])
def test_generated_instances_validate(schema):
    cache = SchemaCache()
    for seed in range(25):
        value = InstanceGenerator(schema, f"seed-{seed}", cache=cache).generate()
        if "oneOf" in schema and schema["oneOf"][0] == {"type": "integer"}:
            continue  # integer also matches number: generate_instance retries with another salt
        assert is_valid(schema, value), value
        assert generate_instance(schema, f"seed-{seed}", cache=cache) == generate_instance(schema, f"seed-{seed}")


def test_generate_instance_retries_until_valid():
    schema = {"oneOf": [{"type": "integer"}, {"type": "number"}]}
    values = [generate_instance(schema, f"s{i}") for i in range(10)]
    assert all(is_valid(schema, v) for v in values)
    assert len({repr(v) for v in values}) > 1, "the seed changes the value"


def test_error_branch_is_not_chosen():
    schema = next(s for s in SCHEMAS if "oneOf" in s and is_error_branch(s["oneOf"][0]))
    assert all("ok" in InstanceGenerator(schema, f"s{i}").generate() for i in range(20))
    assert is_error_branch(schema["oneOf"][0]) and not is_error_branch(schema["oneOf"][1])


def test_generation_is_deterministic_and_ids_follow_arguments():
    schema = SCHEMAS[-1]
    first = InstanceGenerator(schema, "session|tool|{a:1}").generate()
    assert first == InstanceGenerator(schema, "session|tool|{a:1}").generate()
    other = InstanceGenerator(schema, "session|tool|{a:2}").generate()
    assert first["user_id"] != other["user_id"] and first["confirmation_code"] != other["confirmation_code"]


def test_arguments_are_echoed_when_they_fit():
    schema = {"type": "object", "required": ["order_id", "qty"], "properties": {
        "order_id": {"type": "string"}, "qty": {"type": "integer", "maximum": 5}}}
    value = InstanceGenerator(schema, "s", echo={"order_id": "ORD-9", "qty": 50}).generate()
    assert value["order_id"] == "ORD-9" and value["qty"] != 50


def test_echo_is_used_by_the_first_attempts_only_when_valid():
    schema = {"type": "object", "properties": {"title": {"type": "string"}, "count": {"type": "integer"}},
              "required": ["title", "count"]}
    value = generate_instance(schema, "s", {"title": "Groceries", "count": "not an int"})
    assert value["title"] == "Groceries" and isinstance(value["count"], int)


@pytest.mark.parametrize("schema", [
    {"type": "integer", "minimum": 3, "maximum": 2},
    False,
    {"$ref": "#/$defs/Missing"},
    {"$ref": "https://example.com/other.json"},
    {"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "$ref": "#/$defs/loop"},
], ids=["empty-range", "false", "missing-ref", "external-ref", "ref-cycle"])
def test_unsatisfiable_schema_is_reported(schema):
    with pytest.raises(UnsatisfiableSchema):
        InstanceGenerator(schema, "s").generate()
    with pytest.raises(UnsatisfiableSchema):
        generate_instance(schema, "s")


def test_a_value_that_never_validates_is_reported_with_the_reason():
    schema = {"type": "string", "pattern": "^a$", "minLength": 3}
    with pytest.raises(UnsatisfiableSchema, match="is too short|does not match"):
        generate_instance(schema, "s")


OVERLAPPING = {  # open objects with nothing required (the shape of just-eat's SearchByPostcode 200, from the pool)
    "oneOf": [{"$ref": "#/$defs/Search"}, {"$ref": "#/$defs/External"}, {"$ref": "#/$defs/Web"}],
    "$defs": {
        "Search": {"type": "object", "properties": {"Restaurants": {"type": "array", "items": {"type": "string"}},
                                                    "MetaData": {"type": "object"}}},
        "External": {"type": "object", "properties": {"Restaurants": {"type": "array", "items": {"type": "string"}}}},
        "Web": {"type": "object", "properties": {"Open": {"type": "integer"}, "Closed": {"type": "integer"}}},
    },
}


@pytest.mark.parametrize("schema", [
    OVERLAPPING,
    {"oneOf": [{"type": "object", "required": ["a"]}, {"type": "object", "properties": {"b": {"type": "string"}}}]},
    {"type": "object", "properties": {"pet": {"oneOf": [{"type": "object", "properties": {"bark": {"type": "boolean"}}},
                                                        {"type": "object", "properties": {"meow": {"type": "boolean"}}}]}},
     "required": ["pet"]},
], ids=["three-open-objects", "required-vs-open", "nested"])
def test_a_oneof_of_overlapping_objects_gets_an_instance_of_exactly_one_branch(schema):
    for seed in ("a", "b", "c"):
        value = generate_instance(schema, seed)
        assert is_valid(schema, value)
        assert value == generate_instance(schema, seed)


def test_an_optional_property_with_a_contradictory_declaration_is_left_out():
    """vimeo's `user.content_filter` (from the pool): `type: array` with an `enum` of strings, never satisfiable."""
    schema = {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"},
        "content_filter": {"type": "array", "items": {"type": "string"}, "enum": ["drugs", "safe"]}}}
    value = generate_instance(schema, "s")
    assert is_valid(schema, value) and "content_filter" not in value and "name" in value
    with pytest.raises(UnsatisfiableSchema):  # required, it still cannot be satisfied
        generate_instance({**schema, "required": ["name", "content_filter"]}, "s")


def test_one_member_alone_from_an_object_or_its_success_branch() -> None:
    record = {"type": "object", "required": ["id"],
              "properties": {"id": {"type": "string", "minLength": 4}, "title": {"type": "string"},
                             "code": {"type": "string", "pattern": "^N-[0-9]{4}$"}}}
    with_error = {"oneOf": [{"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
                            {"$ref": "#/$defs/Record"}], "$defs": {"Record": record}}
    for schema in (record, with_error):
        ids = {generate_member(schema, "id", f"seed-{n}") for n in range(20)}
        assert len(ids) == 20 and all(is_valid(record["properties"]["id"], i) for i in ids)
        assert generate_member(schema, "id", "seed-3") == generate_member(schema, "id", "seed-3")
        assert is_valid(record["properties"]["code"], generate_member(schema, "code", "seed-3"))
    with pytest.raises(LookupError):
        generate_member(with_error, "error_code", "s")
    with pytest.raises(LookupError):
        generate_member({"type": "array", "items": record}, "id", "s")
