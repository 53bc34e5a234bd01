"""JSON Schema helpers shared by the input formats: checks, closing, `$defs` hoisting.

Tool schemas end up inside one OpenAPI 3.1 document, so a tool's local definitions
(`$defs`, draft-07 `definitions`) move to `components/schemas` and their `$ref`s are rewritten.
Tools that define the same name differently get their own namespace (`<tool>.<Name>`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from gecko.convert.model import ConversionError

COMPONENTS_PREFIX = "#/components/schemas/"
SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMA_SINGLE = (
    "additionalProperties", "items", "not", "if", "then", "else", "contains",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems",
)
OPENNESS_KEYWORDS = ("additionalProperties", "unevaluatedProperties", "patternProperties")
COMPOSITION_KEYWORDS = ("allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas")
_LOCAL_DEFS = re.compile(r"^#/(\$defs|definitions)/([^/]+)(/.*)?$")
_COMPONENT_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def map_subschemas(schema: Any, fn: Callable[[Any], Any]) -> Any:
    """A copy of `schema` with `fn` applied to each direct subschema (not recursively)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: fn(sub) for name, sub in value.items()}
        elif key in SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [fn(sub) for sub in value]
        elif key in SUBSCHEMA_SINGLE and isinstance(value, (dict, bool)):
            out[key] = fn(value)
        elif key == "items" and isinstance(value, list):
            out[key] = [fn(sub) for sub in value]
        else:
            out[key] = value
    return out


def walk_schemas(schema: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every object (sub)schema of `schema` with its JSON pointer, depth first."""
    if not isinstance(schema, dict):
        return []
    found = [(path, schema)]
    for key, value in schema.items():
        if key in SUBSCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                found += walk_schemas(sub, f"{path}/{key}/{name}")
        elif (key in SUBSCHEMA_LISTS or key == "items") and isinstance(value, list):
            for index, sub in enumerate(value):
                found += walk_schemas(sub, f"{path}/{key}/{index}")
        elif key in SUBSCHEMA_SINGLE:
            found += walk_schemas(value, f"{path}/{key}")
    return found


def iter_refs(schema: Any) -> list[str]:
    """Every `$ref` value in `schema`, depth first."""
    return [node["$ref"] for _, node in walk_schemas(schema) if isinstance(node.get("$ref"), str)]


def check_schema(schema: Any, where: str) -> None:
    """Raise ConversionError when `schema` is not a valid JSON Schema 2020-12."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        path = "/".join(str(p) for p in exc.absolute_path)
        raise ConversionError(f"{where}: invalid JSON Schema: {exc.message}" + (f" (at {path})" if path else "")) from None


def normalise_dialect(schema: dict[str, Any]) -> dict[str, Any]:
    """Make a draft-07 style schema fit JSON Schema 2020-12 (the OpenAPI 3.1 dialect).

    Drops the root `$schema`/`$id` (the document sets the dialect) and turns array-form `items`
    into `prefixItems` (with `additionalItems` becoming `items`).
    """

    def fix(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        node = map_subschemas(node, fix)
        if isinstance(node.get("items"), list):
            node = dict(node)
            node["prefixItems"] = node.pop("items")
            if "additionalItems" in node:
                node["items"] = node.pop("additionalItems")
        return node

    root = {k: v for k, v in schema.items() if k not in ("$schema", "$id")}
    return fix(root)


def close_object(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` refusing undeclared keys, unless it already says how extra keys are treated.

    A plain object gets `additionalProperties: false`; one built with `allOf`/`anyOf`/`oneOf`/`$ref`
    gets `unevaluatedProperties: false`, which also sees the properties its branches declare.
    """
    if any(k in schema for k in OPENNESS_KEYWORDS):
        return schema
    if any(k in schema for k in COMPOSITION_KEYWORDS):
        return {**schema, "unevaluatedProperties": False}
    return {**schema, "additionalProperties": False}


def component_name(name: str) -> str:
    """A valid `components/schemas` key for a definition name."""
    return _COMPONENT_UNSAFE.sub("_", name).strip("_") or "Schema"


def rewrite_refs(schema: Any, rename: Callable[[str], str]) -> Any:
    """A copy of `schema` with every `$ref` replaced by `rename(ref)`."""

    def visit(node: Any) -> Any:
        node = map_subschemas(node, visit)
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            node = {**node, "$ref": rename(node["$ref"])}
        return node

    return visit(schema)


class DefinitionPool:
    """Shared `components/schemas` of one document, filled tool by tool."""

    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {}

    def absorb(self, schema: Any, owner: str) -> Any:
        """Move the local definitions of `schema` (one tool's) into the pool; return the rewritten schema.

        Args:
            schema: a tool's parameter or result schema, possibly with `$defs`/`definitions`.
            owner: the tool's name, used in messages and as namespace on a clash.

        Raises:
            ConversionError: a `$ref` that is neither local to the schema's definitions nor already
                a `#/components/schemas/` reference to a known definition.
        """
        if not isinstance(schema, dict):
            return schema
        local = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
        body = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
        names = {name: component_name(name) for name in local}
        if len(set(names.values())) != len(names):
            raise ConversionError(f"tool {owner!r}: definition names clash once made safe: {sorted(local)}")

        def rename_with(mapping: dict[str, str]) -> Callable[[str], str]:
            def rename(ref: str) -> str:
                match = _LOCAL_DEFS.match(ref)
                if match and match.group(2) in mapping:
                    return COMPONENTS_PREFIX + mapping[match.group(2)] + (match.group(3) or "")
                if ref.startswith(COMPONENTS_PREFIX) and ref[len(COMPONENTS_PREFIX):].split("/")[0] in self.schemas:
                    return ref
                raise ConversionError(f"tool {owner!r}: unsupported $ref {ref!r} (only local $defs are supported)")

            return rename

        mapping = dict(names)
        moved = {mapping[n]: rewrite_refs(copy.deepcopy(s), rename_with(mapping)) for n, s in local.items()}
        if any(k in self.schemas and self.schemas[k] != v for k, v in moved.items()):
            prefix = component_name(owner)
            mapping = {n: f"{prefix}.{names[n]}" for n in local}
            moved = {mapping[n]: rewrite_refs(copy.deepcopy(s), rename_with(mapping)) for n, s in local.items()}
            clash = sorted(k for k, v in moved.items() if k in self.schemas and self.schemas[k] != v)
            if clash:
                raise ConversionError(f"tool {owner!r}: definitions {clash} clash with other tools' definitions")
        self.schemas.update(moved)
        return rewrite_refs(body, rename_with(mapping))
