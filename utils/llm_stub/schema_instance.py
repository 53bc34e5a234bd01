"""A small deterministic generator of JSON values that fit a JSON Schema (2020-12 subset).

Same schema, seed and hints give the same value. Covers what tool schemas use: types, `enum`,
`const`, local `$ref`s into `$defs`, `allOf` (merged), `anyOf`/`oneOf` (first branch that
validates), objects (`properties`, `required`, `additionalProperties`, `minProperties`), arrays
(`items`, `prefixItems`, `minItems`/`maxItems`, `uniqueItems`), string length, `pattern` (via rstr)
and common formats, numeric bounds and `multipleOf`. `examples` and `default` are used when valid.
`hints` supplies values by property name (e.g. echoing a tool call's arguments into its response).
"""

from __future__ import annotations

import copy
import hashlib
import math
import random
import uuid
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

MAX_DEPTH = 8
FULL_OBJECT_DEPTH = 3
"""Below this depth optional properties are filled in too; deeper, only required ones."""

_FORMATS: dict[str, str] = {
    "date": "2025-01-15",
    "date-time": "2025-01-15T10:30:00Z",
    "time": "10:30:00",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "uri": "https://example.com/resource",
    "iri": "https://example.com/resource",
    "uri-reference": "https://example.com/resource",
    "url": "https://example.com/resource",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.10",
    "ipv6": "2001:db8::10",
    "duration": "P1D",
    "json-pointer": "/items/0",
    "regex": "^[a-z]+$",
}


class SchemaInstanceError(ValueError):
    """No value fitting the schema could be produced (e.g. `false`, or contradictory keywords)."""


def _seed_int(seed: Any) -> int:
    return int(hashlib.sha256(repr(seed).encode()).hexdigest()[:16], 16)


class _Generator:
    def __init__(self, root: Any, rng: random.Random, hints: Mapping[str, Any]) -> None:
        self.root = root
        self.rng = rng
        self.hints = hints
        defs = root.get("$defs") if isinstance(root, dict) else None
        self.defs = defs if isinstance(defs, dict) else {}
        self._validators: dict[int, Draft202012Validator] = {}

    def valid(self, schema: Any, value: Any) -> bool:
        if isinstance(schema, bool):
            return schema
        key = id(schema)
        validator = self._validators.get(key)
        if validator is None:
            full = {**schema, "$defs": {**self.defs, **schema.get("$defs", {})}} if self.defs else schema
            validator = Draft202012Validator(full, format_checker=FormatChecker())
            self._validators[key] = validator
        try:
            return validator.is_valid(value)
        except Exception:  # noqa: BLE001 - an unusual keyword must not break generation
            return False

    def resolve(self, schema: Any) -> Any:
        seen = 0
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 32:
            ref = schema["$ref"]
            target: Any = self.root
            if not ref.startswith("#"):
                raise SchemaInstanceError(f"external $ref {ref!r} is not supported")
            for raw in [t for t in ref[1:].split("/") if t]:
                token = raw.replace("~1", "/").replace("~0", "~")
                if isinstance(target, dict) and token in target:
                    target = target[token]
                else:
                    raise SchemaInstanceError(f"$ref {ref!r} does not resolve")
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **siblings} if isinstance(target, dict) else target
            seen += 1
        return schema

    def merge_all_of(self, schema: dict[str, Any]) -> dict[str, Any]:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema.get("allOf", []):
            part = self.resolve(part)
            if not isinstance(part, dict):
                continue
            part = self.merge_all_of(part) if "allOf" in part else part
            for key, value in part.items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required":
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
                elif key not in merged:
                    merged[key] = value
        return merged

    def gen(self, schema: Any, depth: int, name: str) -> Any:
        schema = self.resolve(schema)
        if schema is True or schema == {}:
            return f"{name or 'value'}-{self.rng.randint(1, 999)}"
        if schema is False:
            raise SchemaInstanceError("schema 'false' admits no value")
        if not isinstance(schema, dict):
            return None
        if "allOf" in schema:
            schema = self.merge_all_of(schema)
        if "const" in schema:
            return copy.deepcopy(schema["const"])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            choices = [v for v in schema["enum"] if v is not None] or schema["enum"]
            return copy.deepcopy(self.rng.choice(choices))
        for key in ("examples", "default"):
            candidates = schema.get(key) if key == "examples" else [schema[key]] if key in schema else []
            for candidate in candidates if isinstance(candidates, list) else []:
                if self.valid(schema, candidate):
                    return copy.deepcopy(candidate)
        for key in ("oneOf", "anyOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self.branch(schema, key, depth, name)
        kind = self.kind(schema)
        if kind == "object":
            return self.obj(schema, depth)
        if kind == "array":
            return self.array(schema, depth, name)
        if kind == "string":
            return self.string(schema, name)
        if kind == "integer":
            return int(self.number(schema, integer=True))
        if kind == "number":
            return self.number(schema, integer=False)
        if kind == "boolean":
            return self.rng.random() < 0.5
        return None

    def kind(self, schema: dict[str, Any]) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            non_null = [t for t in declared if t != "null"]
            return non_null[0] if non_null else "null"
        if isinstance(declared, str):
            return declared
        if any(k in schema for k in ("properties", "required", "additionalProperties", "minProperties")):
            return "object"
        if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
            return "array"
        if any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
            return "string"
        if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
            return "number"
        return "string"

    def branch(self, schema: dict[str, Any], key: str, depth: int, name: str) -> Any:
        rest = {k: v for k, v in schema.items() if k != key}
        branches = schema[key]
        order = sorted(range(len(branches)), key=lambda i: self.resolve(branches[i]) == {"type": "null"})
        last: Any = None
        for index in order:
            sub = self.resolve(branches[index])
            candidate_schema = {**rest, **sub} if isinstance(sub, dict) else sub
            last = self.gen(candidate_schema, depth, name)
            if self.valid(schema, last):
                return last
        return last

    def obj(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties") or {}
        required = [r for r in schema.get("required", []) if isinstance(r, str)]
        names = list(props) if depth < FULL_OBJECT_DEPTH else [n for n in props if n in required]
        names += [r for r in required if r not in names]
        out: dict[str, Any] = {}
        for prop in names:
            sub = props.get(prop, schema.get("additionalProperties", True))
            if sub is False:
                sub = True
            if prop in self.hints and self.valid(self.resolve(sub), self.hints[prop]):
                out[prop] = copy.deepcopy(self.hints[prop])
                continue
            if depth >= MAX_DEPTH and prop not in required:
                continue
            out[prop] = self.gen(sub, depth + 1, prop)
        limit = schema.get("maxProperties")
        if isinstance(limit, int) and len(out) > limit:
            for prop in [n for n in list(out) if n not in required][: len(out) - limit]:
                del out[prop]
        extra = schema.get("additionalProperties", True)
        index = 1
        while len(out) < int(schema.get("minProperties", 0)) and extra is not False and index < 100:
            out.setdefault(f"key{index}", self.gen(extra, depth + 1, f"key{index}"))
            index += 1
        return out

    def array(self, schema: dict[str, Any], depth: int, name: str) -> list[Any]:
        prefix = schema.get("prefixItems") or []
        items = schema.get("items", True)
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        count = max(low, len(prefix), 1 if depth < MAX_DEPTH else 0)
        if isinstance(high, int):
            count = min(count, high)
        if items is False:
            count = min(count, len(prefix))
        out: list[Any] = []
        for index in range(count):
            sub = prefix[index] if index < len(prefix) else items
            value = self.gen(sub, depth + 1, name)
            tries = 0
            while schema.get("uniqueItems") and value in out and tries < 10:
                value = self.gen(sub, depth + 1, name)
                tries += 1
            out.append(value)
        return out

    def string(self, schema: dict[str, Any], name: str) -> str:
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt in _FORMATS:
            return self.formatted(fmt, name)
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            import rstr

            try:
                return rstr.Rstr(self.rng).xeger(pattern)
            except Exception:  # noqa: BLE001 - an exotic regex falls back to a plain string
                pass
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        base = f"{(name or 'text').replace(' ', '_')}-{self.rng.randint(100, 999)}"
        if len(base) < low:
            base += "x" * (low - len(base))
        if isinstance(high, int):
            base = base[:high]
        return base

    def formatted(self, fmt: str, name: str) -> str:
        """A value of a known format; identifiers and dates vary with the seed."""
        rng = self.rng
        if fmt == "uuid":
            return str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if fmt == "date":
            return f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        if fmt == "date-time":
            return f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z"
        if fmt in ("email", "idn-email"):
            return f"{(name or 'user').lower().replace(' ', '')[:20] or 'user'}{rng.randint(1, 999)}@example.com"
        return _FORMATS[fmt]

    def number(self, schema: dict[str, Any], integer: bool) -> float:
        low = schema.get("minimum")
        high = schema.get("maximum")
        ex_low = schema.get("exclusiveMinimum")
        ex_high = schema.get("exclusiveMaximum")
        step = 1 if integer else 0.01
        if isinstance(ex_low, (int, float)) and not isinstance(ex_low, bool):
            low = ex_low + step if low is None else max(low, ex_low + step)
        if isinstance(ex_high, (int, float)) and not isinstance(ex_high, bool):
            high = ex_high - step if high is None else min(high, ex_high - step)
        if low is None:
            low = 1 if high is None or high >= 1 else high - 100
        if high is None:
            high = low + 100
        multiple = schema.get("multipleOf")
        if isinstance(multiple, (int, float)) and multiple > 0:
            first = math.ceil(low / multiple)
            last = math.floor(high / multiple)
            k = self.rng.randint(first, max(first, min(last, first + 100)))
            value = k * multiple
            return int(value) if integer else value
        if integer:
            return self.rng.randint(math.ceil(low), max(math.ceil(low), math.floor(high)))
        return round(self.rng.uniform(low, high), 2) if high > low else low


def generate_instance(schema: Any, seed: Any = 0, hints: Mapping[str, Any] | None = None) -> Any:
    """A value that fits `schema` (best effort for exotic keywords; check with `is_valid`).

    Args:
        schema: a JSON Schema; local `$ref`s resolve against it (its `$defs`).
        seed: any hashable-by-repr value; equal seeds give equal values.
        hints: property name → preferred value, used where it validates.

    Raises:
        SchemaInstanceError: an unsatisfiable schema or an unresolvable `$ref`.
    """
    generator = _Generator(schema, random.Random(_seed_int(seed)), hints or {})
    return generator.gen(schema, 0, "")


def is_valid(schema: Any, value: Any) -> bool:
    """Whether `value` validates against `schema` (formats checked)."""
    return Draft202012Validator(schema, format_checker=FormatChecker()).is_valid(value)


def invalid_instance(schema: Any, seed: Any = 0) -> Any:
    """A JSON value that does NOT validate against `schema` (for fault injection)."""
    candidates: list[Any] = []
    root = schema if isinstance(schema, dict) else {}
    required = root.get("required") or []
    if required:
        value = generate_instance(schema, seed)
        if isinstance(value, dict):
            value.pop(required[0], None)
            candidates.append(value)
    candidates += [{"unexpected": True}, [], "not valid", 12345, None]
    for candidate in candidates:
        if not is_valid(schema, candidate):
            return candidate
    return {"$invalid": [None]}
