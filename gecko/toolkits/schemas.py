"""Turn OpenAPI schema objects into self-contained JSON Schema 2020-12.

Two jobs, done once per toolkit at load time:
- normalise OpenAPI 3.0 dialect (`nullable`, boolean `exclusiveMinimum/Maximum`) to 3.1 / 2020-12;
- rewrite local `$ref`s (`#/components/schemas/Pet`) to `#/$defs/<escaped pointer>` and attach every
  reachable target under the operation schema's `$defs`, so each schema compiles on its own and
  recursive schemas stay finite. Targets are processed once and shared between operations.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import jsonschema_rs

from utils.schema.refs import SchemaRefError, pointer_get

SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMA_SINGLE = (
    "additionalProperties", "items", "not", "if", "then", "else", "contains",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems",
)


class InvalidSchemaError(ValueError):
    """A schema object that is not valid JSON Schema 2020-12 (after 3.0 normalisation)."""


def check_schema(schema: Any, where: str) -> None:
    """Raise InvalidSchemaError unless `schema` (its `$defs` aside) is valid against the 2020-12 meta-schema.

    `$defs` entries are checked once each, when their target is first prepared.
    """
    top = {k: v for k, v in schema.items() if k != "$defs"} if isinstance(schema, dict) else schema
    if jsonschema_rs.meta.is_valid(top):
        return
    try:
        jsonschema_rs.meta.validate(top)
    except jsonschema_rs.ValidationError as exc:
        raise InvalidSchemaError(f"{where}: not a valid JSON Schema: {str(exc).splitlines()[0]}") from exc


def resolve_object(doc: dict[str, Any], obj: Any, limit: int = 32) -> Any:
    """Follow `$ref` chains of non-schema objects (parameters, request bodies, responses)."""
    seen = 0
    while isinstance(obj, dict) and "$ref" in obj:
        obj = pointer_get(doc, obj["$ref"])
        seen += 1
        if seen > limit:
            raise SchemaRefError("$ref chain too long or cyclic")
    return obj


def _def_key(pointer: str) -> str:
    """A `$defs` key for a pointer target that needs no JSON-pointer escaping (`components.schemas.Pet`)."""
    raw = pointer[2:] if pointer.startswith("#/") else pointer
    safe = re.sub(r"[^A-Za-z0-9_\-]", ".", raw)
    if safe != raw.replace("/", "."):
        safe += "." + hashlib.sha1(raw.encode()).hexdigest()[:8]
    return safe


class SchemaPreparer:
    """Prepares the schemas of one document; caches processed `$ref` targets."""

    def __init__(self, doc: dict[str, Any], openapi_30: bool) -> None:
        self._doc = doc
        self._openapi_30 = openapi_30
        self._targets: dict[str, Any] = {}
        self._deps: dict[str, set[str]] = {}
        self._reach: dict[str, frozenset[str]] = {}

    def prepare(self, schema: Any) -> dict[str, Any] | bool:
        """Return a self-contained copy of `schema` with all reachable `$ref` targets under `$defs`."""
        refs: set[str] = set()
        out = self._convert(schema, refs)
        if not refs:
            return out
        closure = self._closure(refs)
        defs = {key: self._targets[key] for key in sorted(closure)}
        if isinstance(out, bool):
            out = {} if out else {"not": {}}
        if isinstance(out.get("$defs"), dict):
            defs = {**out["$defs"], **defs}
        return {**out, "$defs": defs}

    def _closure(self, refs: set[str]) -> set[str]:
        done: set[str] = set()
        for ref in refs:
            if ref not in done:
                done |= self._reachable(ref)
        return done

    def _reachable(self, start: str) -> frozenset[str]:
        cached = self._reach.get(start)
        if cached is None:
            todo, seen = [start], set()
            while todo:
                key = todo.pop()
                if key not in seen:
                    seen.add(key)
                    todo.extend(self._deps.get(key, ()))
            cached = self._reach[start] = frozenset(seen)
        return cached

    def _target(self, pointer: str) -> str:
        key = _def_key(pointer)
        if key not in self._targets:
            self._targets[key] = True  # placeholder breaks recursion
            deps: set[str] = set()
            converted = self._convert(pointer_get(self._doc, pointer), deps)
            check_schema(converted, pointer)
            self._targets[key] = converted
            self._deps[key] = deps
        return key

    def _convert(self, schema: Any, refs: set[str]) -> Any:
        if isinstance(schema, bool) or not isinstance(schema, dict):
            return schema
        out: dict[str, Any] = {}
        for name, value in schema.items():
            if name == "$ref" and isinstance(value, str):
                if value.startswith("#/$defs/"):
                    out[name] = value
                    continue
                key = self._target(value)
                refs.add(key)
                out[name] = "#/$defs/" + key
            elif name in SUBSCHEMA_MAPS and isinstance(value, dict):
                out[name] = {k: self._convert(v, refs) for k, v in value.items()}
            elif name in SUBSCHEMA_LISTS and isinstance(value, list):
                out[name] = [self._convert(v, refs) for v in value]
            elif name in SUBSCHEMA_SINGLE:
                if isinstance(value, list) and name == "items":
                    out["prefixItems"] = [self._convert(v, refs) for v in value]
                else:
                    out[name] = self._convert(value, refs)
            else:
                out[name] = value
        if self._openapi_30:
            _normalise_30(out)
        return out


def _normalise_30(schema: dict[str, Any]) -> None:
    """In place: OpenAPI 3.0 schema keywords → JSON Schema 2020-12."""
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = schema.get(bound)
        if isinstance(flag, bool):
            if flag and limit in schema:
                schema[bound] = schema.pop(limit)
            else:
                del schema[bound]
    if schema.pop("nullable", False) is True:
        kind = schema.get("type")
        if isinstance(kind, str):
            schema["type"] = [kind, "null"]
            if "enum" in schema and None not in schema["enum"]:
                schema["enum"] = [*schema["enum"], None]
        elif isinstance(kind, list):
            if "null" not in kind:
                schema["type"] = [*kind, "null"]
        else:
            inner = {k: schema.pop(k) for k in list(schema) if k not in ("description", "title", "default")}
            schema["anyOf"] = [inner, {"type": "null"}]
