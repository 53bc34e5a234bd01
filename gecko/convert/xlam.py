"""xLAM / APIGen tool definitions → tool specs.

The xLAM function-calling datasets (APIGen) describe each tool as
`{"name", "description", "parameters": {param: {"type", "description", "default"?}}}`: a flat map of
parameters whose types are Python-flavoured strings. A tool list may also arrive as a JSON string (the
datasets store `tools` that way). A tool whose `parameters` is already a JSON Schema object
(`{"type": "object", "properties": …}`) is read as an OpenAI function.

Type strings, case-insensitive, nested with `[…]`:

| xLAM | JSON Schema |
|---|---|
| `str`, `string` | `string` |
| `int`, `integer` | `integer` |
| `float`, `number`, `double` | `number` |
| `bool`, `boolean` | `boolean` |
| `list`, `List[X]`, `array`, `Sequence[X]` | `array` (items `X`) |
| `set`, `Set[X]` | `array` with `uniqueItems` |
| `tuple`, `Tuple[X, Y]` | `array` (`prefixItems`) |
| `dict`, `Dict[K, V]`, `object`, `Mapping[K, V]` | `object` (`additionalProperties` from `V`) |
| `Optional[X]` | `X` or `null`, and the parameter is optional |
| `X, optional`, `X, default …` | `X`, and the parameter is optional |
| `Union[X, Y]`, `X | Y` | `anyOf` |
| `Any`, `Callable`, anything else | any JSON value |

A parameter is required unless its type says optional or it declares a `default`. The arguments
object refuses unknown parameters (`additionalProperties: false`), as the datasets' checkers do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from gecko.convert.bfcl import bfcl_tool
from gecko.convert.model import Access, ConversionError, ToolSpec
from gecko.convert.openai_tools import openai_tools
from gecko.convert.schema import DefinitionPool

_SCALARS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"}, "string": {"type": "string"}, "text": {"type": "string"},
    "int": {"type": "integer"}, "integer": {"type": "integer"},
    "float": {"type": "number"}, "number": {"type": "number"}, "double": {"type": "number"},
    "bool": {"type": "boolean"}, "boolean": {"type": "boolean"},
    "none": {"type": "null"}, "null": {"type": "null"},
}
_ARRAYS = ("list", "array", "sequence", "iterable")
_OBJECTS = ("dict", "object", "mapping", "json")
_OPTIONAL_SUFFIX = re.compile(r",\s*(optional|default\b.*)$", re.IGNORECASE)


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated parts of a type's arguments (`str, List[int]` → two parts)."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def type_schema(text: str) -> dict[str, Any]:
    """The JSON Schema of one xLAM type string (`List[int]`, `Optional[str]`, `Dict[str, Any]` …)."""
    text = text.strip().strip("'\"")
    if "|" in text and "[" not in text:
        return {"anyOf": [type_schema(part) for part in text.split("|")]}
    head, _, rest = text.partition("[")
    name = head.strip().lower().rpartition(".")[2]
    args = _split_args(rest[:-1]) if rest.endswith("]") else []
    if name in _SCALARS and not args:
        return dict(_SCALARS[name])
    if name == "optional" and args:
        return {"anyOf": [type_schema(args[0]), {"type": "null"}]}
    if name == "union" and args:
        return {"anyOf": [type_schema(arg) for arg in args]}
    if name in _ARRAYS:
        return {"type": "array", **({"items": type_schema(args[0])} if args else {})}
    if name in ("set", "frozenset"):
        return {"type": "array", "uniqueItems": True, **({"items": type_schema(args[0])} if args else {})}
    if name == "tuple":
        items = [type_schema(arg) for arg in args if arg != "..."]
        if len(args) == 2 and args[1] == "...":
            return {"type": "array", "items": items[0]}
        return {"type": "array", **({"prefixItems": items} if items else {})}
    if name in _OBJECTS:
        value = type_schema(args[1]) if len(args) == 2 else {}
        return {"type": "object", **({"additionalProperties": value} if value else {})}
    if name == "literal" and args:
        return {"enum": [_literal(arg) for arg in args]}
    return {}


def _literal(text: str) -> Any:
    try:
        return json.loads(text.replace("'", '"'))
    except ValueError:
        return text.strip("'\"")


def _parameter(name: str, declared: Any, tool: str) -> tuple[dict[str, Any], bool]:
    """(schema, required) of one xLAM parameter."""
    if not isinstance(declared, Mapping):
        raise ConversionError(f"{tool}: parameter {name!r} must be an object with a 'type', got {declared!r}")
    raw_type = str(declared.get("type") or "any")
    optional = bool(_OPTIONAL_SUFFIX.search(raw_type)) or raw_type.strip().lower().startswith("optional[")
    schema = type_schema(_OPTIONAL_SUFFIX.sub("", raw_type))
    if declared.get("description"):
        schema["description"] = str(declared["description"])
    if "default" in declared:
        schema["default"] = declared["default"]
    if isinstance(declared.get("enum"), list):
        schema["enum"] = list(declared["enum"])
    return schema, not optional and "default" not in declared


def _is_row(data: Any) -> bool:
    return isinstance(data, Mapping) and "name" not in data and "tools" in data


def xlam_functions(data: Any) -> list[dict[str, Any]]:
    """The tool objects in `data`: a list, one tool, a JSON string of either, or rows `{"tools": …}` (one or a list).

    Raises:
        ConversionError: `data` holds no tool objects.
    """
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise ConversionError(f"xLAM tools: not valid JSON: {exc}") from None
    if _is_row(data):
        return xlam_functions(data["tools"])
    items = data if isinstance(data, list) else [data]
    if any(_is_row(item) for item in items):  # dataset rows (JSON Lines): their tools, in order
        return [function for item in items for function in xlam_functions(item)]
    if not all(isinstance(item, Mapping) and isinstance(item.get("name"), str) and item["name"] for item in items):
        raise ConversionError("xLAM tools: expected tool objects with a non-empty 'name'")
    return [dict(item) for item in items]


def unique_functions(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`functions` without repeats of an identical tool (dataset rows share tools); differing twins are kept."""
    seen: set[str] = set()
    unique: list[dict[str, Any]] = []
    for function in functions:
        key = json.dumps(function, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            unique.append(function)
    return unique


def _is_json_schema(parameters: Any) -> bool:
    return isinstance(parameters, Mapping) and parameters.get("type") in ("object", "dict") \
        and isinstance(parameters.get("properties", {}), Mapping) and "properties" in parameters


def xlam_tools(data: Any, pool: DefinitionPool, access: Mapping[str, Access] | None = None) -> list[ToolSpec]:
    """Tool specs of every xLAM tool in `data`; tools with JSON Schema parameters go through the OpenAI reader.

    Raises:
        ConversionError: malformed tools or parameters.
    """
    access = access or {}
    tools: list[ToolSpec] = []
    for function in xlam_functions(data):
        name = function["name"]
        params = function.get("parameters") or {}
        if _is_json_schema(params):
            if params.get("type") == "dict":  # BFCL-style Gorilla types
                tools.append(bfcl_tool(function, access.get(name)))
            else:
                tools.extend(openai_tools([function], pool, access))
            continue
        if not isinstance(params, Mapping):
            raise ConversionError(f"{name}: 'parameters' must be an object")
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param, declared in params.items():
            properties[param], is_required = _parameter(str(param), declared, name)
            if is_required:
                required.append(str(param))
        schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            schema["required"] = required
        tools.append(ToolSpec(name=name, description=str(function.get("description") or ""), parameters=schema,
                              access=access.get(name)))
    return tools
