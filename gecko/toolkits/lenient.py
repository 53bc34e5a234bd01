"""Lenient loading: repair the faults of real-world OpenAPI documents whose meaning is unambiguous, and say where.

Published vendor documents often carry faults that do not change what the API does: an `example` or `default`
that does not fit its own schema (`'100'` for an integer, `'false'` for a boolean, a 64-bit default beyond int64),
an `enum` or `required` list with a value twice, one parameter declared twice. A validator refuses the whole
document for any of them. `repair_document` fixes each in place (drops the bad `example`/`default`, removes the
repeated value, keeps the first declaration of a parameter) and returns one `Fault` per fix with the JSON pointer
of the place, so the loader can warn once per fault; what cannot be simulated is refused per operation by the loader
(`gecko.toolkits.loader`). `--strict` skips all of this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from utils.jsonutil import json_pointer
from utils.schema.refs import SchemaRefError, pointer_get

SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMA_SINGLE = ("additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames",
                    "unevaluatedProperties", "unevaluatedItems", "additionalItems")
EXAMPLE_KEYS = ("default", "example")
FIT_DEPTH = 16
"""How deep `_fits` follows an example into nested schemas; deeper, it accepts."""
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
KEYWORD_TYPES: dict[str, tuple[type, ...]] = {
    "pattern": (str,), "format": (str,), "minLength": (int,), "maxLength": (int,), "minItems": (int,),
    "maxItems": (int,), "minProperties": (int,), "maxProperties": (int,), "minimum": (int, float),
    "maximum": (int, float), "multipleOf": (int, float)}
"""Schema keywords whose value has one meaning only if it is of this type; another type is dropped."""
_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "object": (dict,), "array": (list,),
                                            "boolean": (bool,), "null": (type(None),)}


@dataclass(frozen=True)
class Fault:
    """One repaired or refused place of a document."""

    pointer: str
    """JSON pointer of the place in the document (`/paths/~1pets/get/parameters/0/schema/default`)."""
    problem: str
    """What was wrong and what the loader did about it."""
    dropped: bool = False
    """An operation (or what it needs) was left out."""

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.problem}"


def repair_document(doc: dict[str, Any]) -> list[Fault]:
    """Repair, in place, the faults of `doc` whose meaning is unambiguous; one `Fault` per repair."""
    repairer = _Repairer(doc, str(doc.get("openapi", "")).startswith("3.0"))
    repairer.drop_unresolvable()
    repairer.walk(doc, ())
    repairer.parameters()
    return repairer.faults


class _Repairer:
    def __init__(self, doc: dict[str, Any], openapi_30: bool) -> None:
        self.doc = doc
        self.openapi_30 = openapi_30
        self.faults: list[Fault] = []

    def fault(self, path: tuple[Any, ...], problem: str, dropped: bool = False) -> None:
        self.faults.append(Fault(json_pointer(list(path)), problem, dropped))

    # -- what cannot be simulated: operations whose `$ref`s do not resolve ---------------------------------------
    def drop_unresolvable(self) -> None:
        """Leave out each operation (or path item, or component) holding a `$ref` that does not resolve, and what
        refers to what was left out, until every `$ref` resolves; a `$ref` elsewhere is left for validation."""
        for _ in range(64):
            broken = [(path, ref) for path, ref in _refs(self.doc, ()) if not self.resolves(ref)]
            owners = {owner: ref for path, ref in broken if (owner := _owner(path)) is not None}
            if not owners:
                return
            for owner, ref in owners.items():
                parent = self.doc
                for key in owner[:-1]:
                    parent = parent[key]
                if isinstance(parent, dict) and owner[-1] in parent:
                    del parent[owner[-1]]
                    what = "operation" if owner[0] == "paths" else "component"
                    self.fault(owner, f"$ref {ref!r} does not resolve: the {what} is left out", dropped=True)

    def resolves(self, ref: str) -> bool:
        try:
            pointer_get(self.doc, ref)
        except SchemaRefError:
            return False
        return True

    # -- the document: every `schema` and `components/schemas` entry is a schema --------------------------
    def walk(self, node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                self.walk(item, (*path, index))
            return
        if not isinstance(node, dict):
            return
        if isinstance(node.get("schema"), dict) and "example" in node and not self.fits(node["schema"], node["example"]):
            del node["example"]
            self.fault((*path, "example"), "example does not fit its schema: dropped")
        for key, value in list(node.items()):
            if key in ("example", "examples") or str(key).startswith("x-"):
                continue  # data, not document structure
            if key == "schema" and isinstance(value, dict):
                self.schema(value, (*path, key))
            elif key == "schemas" and path == ("components",) and isinstance(value, dict):
                for name, schema in value.items():
                    self.schema(schema, (*path, key, name))
            else:
                self.walk(value, (*path, key))

    def schema(self, schema: Any, path: tuple[Any, ...], depth: int = 0) -> None:
        if not isinstance(schema, dict) or depth > 256:
            return
        for key in ("enum", "required"):
            values = schema.get(key)
            if isinstance(values, list):
                unique = _unique(values)
                if len(unique) != len(values):
                    schema[key] = unique
                    self.fault((*path, key), f"{len(values) - len(unique)} repeated value(s) in {key}: removed")
        for key, kinds in KEYWORD_TYPES.items():
            if key in schema and (not isinstance(schema[key], kinds) or isinstance(schema[key], bool)):
                self.fault((*path, key), f"{key} {schema.pop(key)!r} is not a {kinds[0].__name__}: dropped")
        self.declare_required(schema, path)
        for key in EXAMPLE_KEYS:
            if key in schema and not self.fits(schema, schema[key]):
                del schema[key]
                self.fault((*path, key), f"{key} does not fit its schema: dropped")
        for key in SUBSCHEMA_MAPS:
            if isinstance(schema.get(key), dict):
                for name, sub in schema[key].items():
                    self.schema(sub, (*path, key, name), depth + 1)
        for key in SUBSCHEMA_LISTS:
            if isinstance(schema.get(key), list):
                for index, sub in enumerate(schema[key]):
                    self.schema(sub, (*path, key, index), depth + 1)
        for key in SUBSCHEMA_SINGLE:
            value = schema.get(key)
            if isinstance(value, list) and key == "items":
                for index, sub in enumerate(value):
                    self.schema(sub, (*path, key, index), depth + 1)
            else:
                self.schema(value, (*path, key), depth + 1)

    def declare_required(self, schema: dict[str, Any], path: tuple[Any, ...]) -> None:
        """A name `required` beside `allOf` that no part declares: declared as a property of any value."""
        required = schema.get("required")
        if "allOf" not in schema or not isinstance(required, list):
            return
        declared = self.property_names(schema, 0)
        missing = [name for name in required if isinstance(name, str) and name not in declared]
        if missing:
            properties = schema.setdefault("properties", {})
            if isinstance(properties, dict):
                for name in missing:
                    properties[name] = {}
                self.fault((*path, "required"), f"required {missing} not declared by any part: declared as any value")

    def property_names(self, schema: Any, depth: int) -> set[str]:
        schema = self.deref(schema)
        if not isinstance(schema, dict) or depth > FIT_DEPTH:
            return set()
        names = set(schema["properties"]) if isinstance(schema.get("properties"), dict) else set()
        for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
            names |= self.property_names(part, depth + 1)
        return names

    def deref(self, schema: Any) -> Any:
        """`schema` with its `$ref` chain followed (as is when a `$ref` does not resolve)."""
        hops = 0
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and hops < 32:
            try:
                schema = pointer_get(self.doc, schema["$ref"])
            except SchemaRefError:
                return schema
            hops += 1
        return schema

    def fits(self, schema: Any, value: Any, depth: int = 0) -> bool:
        """Whether `value` fits `schema`'s types, enum, integer format and (recursively) items and properties: the
        faults validators refuse documents for. Anything not understood (an unresolvable `$ref`) fits."""
        schema = self.deref(schema)
        if not isinstance(schema, dict) or "$ref" in schema or depth > FIT_DEPTH:
            return True
        if value is None and (schema.get("nullable") is True and self.openapi_30):
            return True
        if not _type_fits(schema.get("type"), value):
            return False
        enum = schema.get("enum")
        if isinstance(enum, list) and enum and _key(value) not in {_key(v) for v in enum}:
            return False
        bounds = INT_RANGES.get(str(schema.get("format")))
        if bounds and isinstance(value, (int, float)) and not isinstance(value, bool) and not (
                bounds[0] <= value <= bounds[1]):
            return False
        if isinstance(value, list) and isinstance(schema.get("items"), dict):
            if not all(self.fits(schema["items"], item, depth + 1) for item in value):
                return False
        properties = schema.get("properties")
        if isinstance(value, dict) and isinstance(properties, dict):
            if not all(self.fits(properties[k], v, depth + 1) for k, v in value.items() if k in properties):
                return False
        parts = [p for p in schema.get("allOf", []) if isinstance(p, dict)] if isinstance(schema.get("allOf"), list) else []
        if not all(self.fits(part, value, depth + 1) for part in parts):
            return False
        for combiner in ("anyOf", "oneOf"):
            branches = schema.get(combiner)
            if isinstance(branches, list) and branches and not any(self.fits(b, value, depth + 1) for b in branches):
                return False
        return True

    # -- parameters declared twice in one list ---------------------------------------------------------------
    def parameters(self) -> None:
        paths = self.doc.get("paths")
        if not isinstance(paths, dict):
            return
        seen: set[str] = set()
        for route, item in paths.items():
            if not isinstance(item, dict):
                continue
            self.dedupe_parameters(item, ("paths", route))
            for method in HTTP_METHODS:
                if isinstance(item.get(method), dict):
                    self.unique_operation_id(str(route), item[method], method, seen)
                    self.dedupe_parameters(item[method], ("paths", route, method))
                    self.declare_path_variables(str(route), item, method)

    def unique_operation_id(self, route: str, op: dict[str, Any], method: str, seen: set[str]) -> None:
        """A repeated operationId is replaced by the one Gecko derives from method and path."""
        op_id = op.get("operationId")
        if isinstance(op_id, str) and op_id in seen:
            op["operationId"] = derived_operation_id(method, route)
            self.fault(("paths", route, method, "operationId"),
                       f"operationId {op_id!r} is used before: this one is {op['operationId']!r}")
        seen.add(str(op.get("operationId") or derived_operation_id(method, route)))

    def declare_path_variables(self, route: str, item: dict[str, Any], method: str) -> None:
        """A `{name}` of the path template that no parameter declares becomes a required string path parameter."""
        op = item[method]
        params = [*(item.get("parameters") or []), *(op.get("parameters") or [])]
        declared = {(p.get("name"), p.get("in")) for p in map(self.deref, params) if isinstance(p, dict)}
        missing = [v for v in path_template_names(route) if (v, "path") not in declared]
        if missing and isinstance(op.get("parameters", []), list):
            op["parameters"] = [*op.get("parameters", []), *({"name": v, "in": "path", "required": True,
                                                              "schema": {"type": "string"}} for v in missing)]
            self.fault(("paths", route, method, "parameters"),
                       f"path variable(s) {missing} not declared: declared as required strings")

    def dedupe_parameters(self, owner: dict[str, Any], path: tuple[Any, ...]) -> None:
        params = owner.get("parameters")
        if not isinstance(params, list):
            return
        kept: list[Any] = []
        seen: set[tuple[str, str]] = set()
        for index, raw in enumerate(params):
            param = self.deref(raw)
            ident = (str(param.get("name")), str(param.get("in"))) if isinstance(param, dict) else None
            if ident is not None and ident in seen:
                self.fault((*path, "parameters", index),
                           f"parameter {ident[0]!r} in {ident[1]} declared again: the first declaration is kept")
                continue
            if ident is not None:
                seen.add(ident)
            kept.append(raw)
        if len(kept) != len(params):
            owner["parameters"] = kept


def _refs(node: Any, path: tuple[Any, ...]) -> Any:
    """(path, `$ref` string) of every reference in the document's structure (examples and extensions aside)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield path, ref
        for key, value in node.items():
            if key not in ("example", "examples") and not str(key).startswith("x-"):
                yield from _refs(value, (*path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _refs(item, (*path, index))


def _owner(path: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What is left out for a broken `$ref` at `path`: its operation, its path item or its component."""
    if len(path) >= 3 and path[0] == "paths":
        return path[:3] if path[2] in HTTP_METHODS else path[:2]
    if len(path) >= 3 and path[0] == "components":
        return path[:3]
    return None


def _type_fits(declared: Any, value: Any) -> bool:
    types = declared if isinstance(declared, list) else [declared] if isinstance(declared, str) else None
    if not types:
        return True
    for kind in types:
        if kind == "integer":
            if isinstance(value, int) and not isinstance(value, bool):
                return True
            if isinstance(value, float) and value.is_integer():
                return True
        elif kind == "number":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return True
        elif kind in _JSON_TYPES:
            if isinstance(value, _JSON_TYPES[kind]):
                return True
        else:
            return True  # an unknown type name: not ours to judge
    return False


def _key(value: Any) -> bytes:
    """Equality as JSON means it (`1` and `true` differ, key order does not matter)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS) + type(value).__name__.encode()
    except TypeError:
        return repr(value).encode()


def _unique(values: list[Any]) -> list[Any]:
    seen: set[bytes] = set()
    out = []
    for value in values:
        key = _key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def derived_operation_id(method: str, route: str) -> str:
    """The operationId Gecko gives an operation without one (`get /pets/{id}` → `get_pets_id`)."""
    return f"{method}_" + (re.sub(r"[^A-Za-z0-9]+", "_", route).strip("_") or "root")


def path_template_names(route: str) -> list[str]:
    """The `{name}` variables of a path template."""
    return re.findall(r"\{([^}/]+)\}", route)
