"""Every regex of a toolkit schema runs in bounded time on the Python side (issue 31, ReDoS)."""

from __future__ import annotations

import time

import pytest

from utils.schema.patterns import SafeValidator, search

ATTACK = "a" * 30 + "!"


def _errors(schema: dict, instance: object) -> list[str]:
    return [error.message for error in SafeValidator(schema).iter_errors(instance)]


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^(a+)+$"},
    {"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}, "additionalProperties": False},
    {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "integer"}}, "unevaluatedProperties": False},
    {"type": "object", "properties": {"x": {"$ref": "#/$defs/p"}}, "unevaluatedProperties": False,
     "$defs": {"p": {"type": "object", "patternProperties": {"^(a+)+$": True}, "additionalProperties": False}}},
])
def test_nested_quantifiers_are_refused_in_milliseconds(schema: dict) -> None:
    instance: object = ATTACK if schema.get("type") == "string" else {ATTACK: 1}
    if "$defs" in schema:
        instance = {"x": {ATTACK: 1}}
    start = time.perf_counter()
    assert _errors(schema, instance)
    assert not SafeValidator(schema).is_valid(instance)
    assert time.perf_counter() - start < 0.5


def test_matching_keeps_json_schema_semantics() -> None:
    schema = {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False,
              "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}}
    assert _errors(schema, {"name": "abc", "x-tag": "t"}) == []
    assert len(_errors(schema, {"name": "ABC", "x-tag": 1, "other": 2})) == 3
    assert search("b", "abc") and not search("^b", "abc")


def test_a_pattern_rust_cannot_compile_runs_with_a_time_limit() -> None:
    assert search(r"a\Z", "ba") and not search(r"a\Z", "ab")  # Python-only syntax: the `regex` engine
