"""What the instance generator (`utils.schema.instance`) needs of one schema, worked out once per schema.

A `SchemaNode` holds the schema after its `$ref`s and which way the generator goes with it: a placeholder, `const`,
an `enum` pick, an `allOf` merge, a `oneOf`/`anyOf` choice, or a value of its JSON type. Made on first use, it also
holds that way's facts: an object's properties with what decides whether each is filled in, an array's bounds, a
string's length limits and format. A `SchemaCache` keeps one per schema object under each root schema
(`SchemaCache.entry`). Before, the generator looked all of this up again for every value it made: a third of the
23 µs a response of the notes example took.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TRIVIAL = "trivial"
"""Kind of a schema that accepts anything (`true`, `{}`, a missing one): the generator gives a placeholder."""
FALSE = "false"
"""Kind of the schema `false`, which accepts nothing."""
ODD = "odd"
"""Kind of what is no schema the generator can follow: a list, a string or a number where a schema belongs, an
`enum` that is not a list, a `$ref` that does not resolve (`SchemaNode.error` says which)."""


def schema_kind(schema: dict[str, Any]) -> str:
    """The JSON type the generator makes for `schema`: its `type` (the first that is not null), else what its
    keywords imply, else string."""
    declared = schema.get("type")
    if isinstance(declared, list):
        non_null = [t for t in declared if t != "null"]
        return non_null[0] if non_null else "null"
    if isinstance(declared, str):
        return declared
    if any(k in schema for k in ("properties", "required", "additionalProperties", "patternProperties")):
        return "object"
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
        return "array"
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return "number"
    return "string"


def refers(schema: Any) -> bool:
    """Whether `schema` (or its `items`) is a `$ref`: an optional property so declared may recurse, and is left out."""
    return isinstance(schema, dict) and ("$ref" in schema or (isinstance(schema.get("items"), dict)
                                                               and "$ref" in schema["items"]))


class SchemaNode:
    """One schema as the generator meets it; the facts past `kind` are filled in by the generator on first use."""

    __slots__ = ("source", "target", "error", "kind", "has_const", "options", "all_of", "combiner", "merged",
                 "branches", "candidates", "facts")

    def __init__(self, source: Any, target: Any = None, error: str | None = None) -> None:
        """Args:
            source: the schema as written (kept: its `id` is the node's key, and must not be reused).
            target: the schema after its `$ref`s.
            error: why the `$ref`s could not be followed (the node then only raises it).
        """
        self.source = source
        self.target = target
        self.error = error
        self.has_const = False
        self.options: list[Any] | None = None
        """The `enum` values to pick from, nulls left out unless only null is allowed."""
        self.all_of = False
        self.combiner: str | None = None
        self.merged: dict[str, Any] | None = None
        """The `allOf` merged into one schema (made on first use)."""
        self.branches: list[Any] | None = None
        """The `oneOf`/`anyOf` branches, error shapes last (made on first use)."""
        self.candidates: list[Any] = []
        """Per branch, the schema the generator makes a value of: the branch, merged with the keywords beside the
        combiner when there are some (made on first use of each)."""
        self.facts: Any = None
        """The kind's own facts: `ObjectFacts`, `ArrayFacts`, `StringFacts` or a number's bounds."""
        if error is not None:
            self.kind = ODD
        elif target is True or target is None or target == {}:
            self.kind = TRIVIAL
        elif target is False:
            self.kind = FALSE
        elif not isinstance(target, dict):
            self.kind = ODD
        else:
            self.has_const = "const" in target
            enum = target.get("enum")
            if enum and not isinstance(enum, list):
                self.kind = ODD
                return
            if enum:
                self.options = [v for v in enum if v is not None] or enum
            self.all_of = "allOf" in target
            self.combiner = "oneOf" if "oneOf" in target else "anyOf" if "anyOf" in target else None
            self.kind = schema_kind(target)


class ObjectFacts:
    """An object schema's properties, in order, each with whether it is required and whether, optional, it may be
    filled in (not `false`, not a `$ref` that could recurse)."""

    __slots__ = ("properties", "required", "extra")

    def __init__(self, schema: dict[str, Any], any_schema: dict[str, Any]) -> None:
        declared: dict[str, Any] = schema.get("properties", {})
        self.required = list(schema.get("required", []))
        self.properties = [(name, sub, name in self.required, sub is not False and not refers(sub))
                           for name, sub in declared.items()]
        extra = schema.get("additionalProperties", True)
        self.extra = extra if isinstance(extra, dict) else any_schema
        """The schema of a required property that `properties` does not declare."""


class ArrayFacts:
    """An array schema's items and bounds."""

    __slots__ = ("prefix", "items", "low", "high", "unique", "recursive")

    def __init__(self, schema: dict[str, Any], any_schema: dict[str, Any]) -> None:
        self.prefix = schema.get("prefixItems", [])
        self.items = schema.get("items", any_schema if not self.prefix else False)
        self.low = int(schema.get("minItems", 0))
        self.high = schema.get("maxItems")
        self.unique = bool(schema.get("uniqueItems"))
        self.recursive = isinstance(self.items, dict) and refers(self.items)


class StringFacts:
    """A string schema's length limits, format (and the maker of a value in it) and pattern."""

    __slots__ = ("low", "high", "pattern", "make")

    def __init__(self, schema: dict[str, Any], formats: dict[str, Callable[..., str]]) -> None:
        self.low = int(schema.get("minLength", 0))
        self.high = schema.get("maxLength")
        fmt = schema.get("format")
        self.pattern = schema.get("pattern")
        self.make = formats[fmt] if fmt in formats else None
