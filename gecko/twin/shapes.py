"""Result schemas from captured results: genson per shape, pinned flags, the in-band error branch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genson import SchemaBuilder  # type: ignore[import-untyped]  # no stubs, no py.typed

MEDIA = "application/json"
MAX_SHAPES = 3
"""At most this many distinct result shapes (key sets) are learned as branches of their own."""
NOT_FOUND_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}


def result_schema(values: Sequence[Any]) -> dict[str, Any] | None:
    """The schema of a tool's successful results: objects of a few distinct shapes (a task, or `{"message": "No
    tasks available"}`) become `anyOf` one branch per shape, most frequent first, each requiring its keys, so a twin
    answers one real shape rather than a mix of optional keys; otherwise genson's merged schema."""
    if not values or not all(isinstance(v, Mapping) for v in values):
        return schema_of(values)
    shapes: dict[frozenset[str], list[Any]] = {}
    for value in values:
        shapes.setdefault(frozenset(value), []).append(value)
    if len(shapes) == 1 or len(shapes) > MAX_SHAPES:
        return schema_of(values)
    ordered = sorted(shapes.values(), key=lambda group: -len(group))
    return {"anyOf": [s for group in ordered if (s := schema_of(group)) is not None]}


def schema_of(values: Sequence[Any]) -> dict[str, Any] | None:
    """genson's schema of `values`; a boolean property that had one value in every result is a `const`
    (`{"success": true}` of a tool whose failures say `false`)."""
    if not values:
        return None
    builder = SchemaBuilder()
    for value in values:
        builder.add_object(value)
    schema = builder.to_schema()
    schema.pop("$schema", None)
    objects = [v for v in values if isinstance(v, Mapping)]
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict) or sub.get("type") != "boolean":
            continue
        seen = {bool(v[name]) for v in objects if isinstance(v.get(name), bool)}
        if len(seen) == 1:
            sub["const"] = seen.pop()
    return schema


def error_branch(bodies: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The in-band error shape: what the error bodies hold, and an `error` message, the one field it requires (what
    the world model's not-found answer fills)."""
    branch = schema_of(bodies) or {"type": "object"}
    branch.setdefault("properties", {}).setdefault("error", {"type": "string"})
    branch["required"] = ["error"]
    return branch


def pin_flags(op: dict[str, Any], oks: Sequence[Any]) -> bool:
    """A declared result schema with its boolean properties pinned (`const`) where every success agreed
    (`{"success": true}`): the twin then never answers a success that reads as a failure. The server's own schema
    is kept in the operation's `x-gecko-source-output-schema` (what the twin lists as its `outputSchema`). False when nothing was pinned."""
    content = (((op.get("responses") or {}).get("200") or {}).get("content") or {}).get(MEDIA) or {}
    schema = content.get("schema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    learned = schema_of(oks) or {}
    pins = {name: sub["const"] for name, sub in (learned.get("properties") or {}).items()
            if isinstance(sub, dict) and "const" in sub and isinstance(props, dict)
            and isinstance(props.get(name), dict) and props[name].get("type") == "boolean"}
    if not pins or not isinstance(schema, dict) or not isinstance(props, dict):
        return False
    op["x-gecko-source-output-schema"] = schema
    content["schema"] = {**schema, "properties": {**props, **{n: {**props[n], "const": v} for n, v in pins.items()}}}
    return True


def set_result(op: dict[str, Any], schema: dict[str, Any]) -> None:
    ok = op.setdefault("responses", {}).setdefault("200", {"description": "Successful result."})
    ok.setdefault("content", {})[MEDIA] = {"schema": schema}


def required_arguments(op: Mapping[str, Any]) -> set[str]:
    schema = (((op.get("requestBody") or {}).get("content") or {}).get(MEDIA) or {}).get("schema") or {}
    return set(schema.get("required") or [])


__all__ = ["MEDIA", "NOT_FOUND_SCHEMA", "error_branch", "pin_flags", "required_arguments", "result_schema", "schema_of",
           "set_result"]
