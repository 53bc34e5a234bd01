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


NOTE = {"$defs": {"Note": {"type": "object", "required": ["note_id", "title"], "properties": {
    "note_id": {"type": "string"}, "title": {"type": "string", "maxLength": 40}, "owner_email": {"type": "string"},
    "created_at": {"type": "string", "format": "date-time"}, "code": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{3}$"},
    "ratio": {"type": "number", "minimum": 0.5, "maximum": 0.75}, "count": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "minItems": 2},
    "parent": {"$ref": "#/$defs/Note", "description": "the parent note"},
    "kind": {"enum": ["memo", "list", None]}, "flag": {"type": "boolean"}}}},
    "oneOf": [{"$ref": "#/$defs/Note", "description": "a note"},
              {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}]}
MIXED = {"type": "object", "required": ["pair", "extra", "merged", "either"], "properties": {
    "pair": {"type": "array", "prefixItems": [{"type": "integer", "minimum": 1, "maximum": 9}, {"format": "uuid"}],
             "items": False},
    "extra": {"type": "object", "minProperties": 2, "additionalProperties": {"type": "integer", "multipleOf": 5}},
    "merged": {"allOf": [{"type": "object", "required": ["a"], "properties": {"a": {"type": "number"}}},
                         {"required": ["city"], "properties": {"city": {"type": "string"}}}]},
    "either": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}], "description": "short"}}}


@pytest.mark.parametrize("shared", [False, True], ids=["own cache", "shared cache"])
def test_a_seed_gives_the_values_it_gave_before_the_generator_kept_its_schema_nodes(shared: bool) -> None:
    """Generated values are behaviour (a session replayed, a recorded benchmark): making the generator faster must
    not change them. These were generated before it kept a node per schema (`utils.schema.nodes`)."""
    cache = SchemaCache() if shared else None
    for _ in range(2 if shared else 1):  # a second time from the nodes the first made
        assert generate_instance(NOTE, "golden", cache=cache) == {
            "note_id": "296F9DE0D5", "title": "Delivery reviewed for Jonas", "owner_email": "farid.lopez30@example.com",
            "created_at": "2025-06-07T07:30:46Z", "code": "NN196", "ratio": 0.55, "count": 7,
            "tags": ["tags-river-9a99", "tags-river-a1f1"], "kind": "memo", "flag": False}
        assert generate_instance(NOTE, "other", {"title": "echoed"}, cache=cache) == {
            "note_id": "A4ECD9545E", "title": "echoed", "owner_email": "ada.almeida63@example.com",
            "created_at": "2024-08-17T11:18:51Z", "code": "XB953", "ratio": 0.72, "count": 42,
            "tags": ["tags-quartz-27d4", "tags-delta-cbaf"], "kind": "memo", "flag": False}
        assert generate_instance(MIXED, "golden", cache=cache) == {
            "pair": [6, "0d29edc8-c07a-b644-55bb-4741a5b2861c"], "extra": {"extra_0": 85, "extra_1": 95},
            "merged": {"a": 379.87, "city": "Seoul"}, "either": "eit"}


def test_a_ref_with_keywords_beside_it_is_checked_by_one_compiled_check_across_calls() -> None:
    """`{"$ref": …, "description": …}` resolves to a merged schema. It used to be made again on every call, and an
    echoed argument checked against it compiled a new check each time, kept in the cache for good."""
    schema = {"$defs": {"Kind": {"enum": ["memo", "list"]}}, "type": "object", "required": ["kind"],
              "properties": {"kind": {"$ref": "#/$defs/Kind", "description": "what the note is"}}}
    cache = SchemaCache()
    for n in range(3):
        assert generate_instance(schema, f"s{n}", {"kind": "list"}, cache=cache) == {"kind": "list"}
    checks = len(cache.checks)
    for n in range(3, 30):
        generate_instance(schema, f"s{n}", {"kind": "list"}, cache=cache)
    assert len(cache.checks) == checks


def test_the_cache_forgets_the_least_recently_used_roots_past_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import utils.schema.instance as instance

    monkeypatch.setattr(instance, "MAX_NODES", 20)
    cache = SchemaCache()
    first = generate_instance(NOTE, "golden", cache=cache)
    generate_instance(MIXED, "golden", cache=cache)
    assert id(NOTE) not in cache.roots and id(MIXED) in cache.roots and cache.node_count <= 20
    assert generate_instance(NOTE, "golden", cache=cache) == first == generate_instance(NOTE, "golden")
    assert list(cache.roots) == [id(NOTE)]  # MIXED went in its turn


def test_the_checks_of_schemas_a_forgotten_root_made_go_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `$ref` with siblings resolves to a schema its node makes; once that root is forgotten and its nodes made
    again, a check compiled for the old one is never used again, and must not stay in the cache for good."""
    import utils.schema.instance as instance

    monkeypatch.setattr(instance, "MAX_NODES", 4)
    schema = {"$defs": {"Kind": {"enum": ["memo", "list"]}}, "type": "object", "required": ["kind", "other"],
              "properties": {"kind": {"$ref": "#/$defs/Kind", "description": "what the note is"},
                             "other": {"$ref": "#/$defs/Kind", "description": "and the other"}}}
    twin = {**schema}  # another root object: each evicts the other
    cache = SchemaCache()
    sizes = []
    for n in range(20):
        for root in (schema, twin):
            assert generate_instance(root, f"s{n}", {"kind": "list", "other": "memo"}, cache=cache) == {
                "kind": "list", "other": "memo"}
        sizes.append(len(cache.checks))
    assert max(sizes) <= 4


@pytest.mark.parametrize("schema", [["not", "a", "schema"], {"type": "string", "enum": "abc"}, 42, None,
                                    {"$ref": "#/$defs/Missing"}])
def test_what_is_no_schema_is_refused_with_an_error_that_says_so(schema: object) -> None:
    with pytest.raises(UnsatisfiableSchema):
        generate_instance(schema, "s")
