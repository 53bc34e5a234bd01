"""Gorilla (BFCL) parameter types → JSON Schema 2020-12.

BFCL function docs use Python-flavoured type names. The mapping:

| Gorilla  | JSON Schema                                    |
|----------|------------------------------------------------|
| string   | `"type": "string"`                             |
| integer  | `"type": "integer"`                            |
| float    | `"type": "number"` (ints are accepted, as BFCL's checker does) |
| boolean  | `"type": "boolean"`                            |
| array    | `"type": "array"` (`items` converted)          |
| tuple    | `"type": "array"` (`items` converted; a list of item schemas becomes `prefixItems`) |
| dict     | `"type": "object"` (`properties`, `required` converted) |
| any      | no `type` keyword: any JSON value              |

JSON Schema type names (`object`, `number`, `null`, …) pass through. Everything else is kept as
declared: a parameter whose default is `None` also accepts `null`; `description`, `default` (even when it does not fit the type: BFCL writes `"false"` for
booleans), `enum`, `format`, bounds. Two repairs keep a declaration satisfiable:

- an `enum` whose members do not fit the declared type (BFCL has booleans with
  `["True", "False", "dontcare"]`) becomes `anyOf: [{type}, {enum}]`: either the type or one of the
  listed tokens;
- an `enum` on an array lists the allowed *items*, so it moves into `items`.

With `close_objects`, a dict that declares properties (and whose `required` names are all among
them) gets `additionalProperties: false`; a dict with no properties stays open. Keys that are not
JSON Schema keywords (BFCL's `optional`) are kept with an `x-` prefix.
"""

from __future__ import annotations

from typing import Any

from gecko.convert.model import ConversionError

GORILLA_TYPES = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
    "any": None,
}
JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")
_PASS_THROUGH = frozenset({
    "description", "default", "format", "title", "examples", "const", "deprecated", "readOnly", "writeOnly",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
    "minProperties", "maxProperties", "contentMediaType", "contentEncoding",
})
_FITS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def json_type(gorilla_type: Any, where: str) -> str | None:
    """The JSON Schema type of a Gorilla type name (None for `any`).

    Raises:
        ConversionError: an unknown type name.
    """
    if gorilla_type in GORILLA_TYPES:
        return GORILLA_TYPES[gorilla_type]
    if gorilla_type in JSON_TYPES:
        return gorilla_type
    raise ConversionError(f"{where}: unknown type {gorilla_type!r}; expected one of {', '.join(GORILLA_TYPES)}")


def gorilla_schema(node: Any, where: str, *, close_objects: bool) -> dict[str, Any]:
    """Convert one Gorilla schema node (and its children) to JSON Schema.

    Args:
        node: a parameter, property, item or response declaration.
        where: location for error messages, e.g. `math.factorial/number`.
        close_objects: add `additionalProperties: false` to dicts that declare properties.

    Raises:
        ConversionError: the node is not an object or has an unknown type.
    """
    if not isinstance(node, dict):
        raise ConversionError(f"{where}: a parameter declaration must be an object, got {type(node).__name__}")
    kind = json_type(node.get("type", "any"), where)
    out: dict[str, Any] = {}
    if kind is not None:
        out["type"] = kind
    for key, value in node.items():
        if key in ("type", "properties", "required", "items", "enum", "additionalProperties"):
            continue
        out[key if key in _PASS_THROUGH or key.startswith("x-") else f"x-{key}"] = value
    if isinstance(node.get("properties"), dict):
        out["properties"] = {
            name: gorilla_schema(sub, f"{where}/{name}", close_objects=close_objects)
            for name, sub in node["properties"].items()
        }
    if isinstance(node.get("required"), list):
        out["required"] = list(node["required"])
    elif "required" in node:
        out["x-required"] = node["required"]
    _convert_items(node, out, where, close_objects)
    if "additionalProperties" in node:
        extra = node["additionalProperties"]
        out["additionalProperties"] = (
            extra if isinstance(extra, bool)
            else gorilla_schema(extra, f"{where}/additionalProperties", close_objects=close_objects)
        )
    if "enum" in node:
        out = _with_enum(out, list(node["enum"]), kind)
    if close_objects and kind == "object" and out.get("properties") and "additionalProperties" not in out:
        if set(out.get("required", [])) <= set(out["properties"]):
            out["additionalProperties"] = False
    if "default" in node and node["default"] is None:
        out = _nullable(out)
    return out


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """A parameter whose declared default is `None` also accepts `null` (Python's `x: str = None`)."""
    if isinstance(out.get("type"), str) and out["type"] != "null":
        out = {**out, "type": [out["type"], "null"]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    elif isinstance(out.get("anyOf"), list) and {"type": "null"} not in out["anyOf"]:
        out = {**out, "anyOf": [*out["anyOf"], {"type": "null"}]}
    return out


def _convert_items(node: dict[str, Any], out: dict[str, Any], where: str, close_objects: bool) -> None:
    items = node.get("items")
    if isinstance(items, dict):
        out["items"] = gorilla_schema(items, f"{where}/items", close_objects=close_objects)
    elif isinstance(items, list):
        out["prefixItems"] = [
            gorilla_schema(sub, f"{where}/items/{i}", close_objects=close_objects) for i, sub in enumerate(items)
        ]
    elif items is not None:
        raise ConversionError(f"{where}: 'items' must be an object or a list")


def _with_enum(out: dict[str, Any], members: list[Any], kind: str | None) -> dict[str, Any]:
    if kind == "array":
        items = dict(out.get("items") or {})
        if "enum" not in items:
            items["enum"] = members
            return {**out, "items": items}
    if kind is None or all(_FITS[kind](m) for m in members):
        return {**out, "enum": members}
    keep = {k: v for k, v in out.items() if k in ("description", "default") or k.startswith("x-")}
    typed = {k: v for k, v in out.items() if k not in keep}
    return {**keep, "anyOf": [typed, {"enum": members}]}
