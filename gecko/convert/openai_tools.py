"""OpenAI tool / function definitions → tool specs.

Accepted shapes: `{"type": "function", "function": {name, description, parameters}}` (Chat
Completions), the bare function object, the flat Responses-API form `{"type": "function", name, …}`,
a list of any of these, or an object holding such a list under `tools` or `functions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gecko.convert.model import Access, ConversionError, ToolSpec
from gecko.convert.schema import DefinitionPool, check_schema, normalise_dialect


def openai_functions(data: Any) -> list[dict[str, Any]]:
    """The function objects in `data`, unwrapped."""
    if isinstance(data, dict) and not ("name" in data or "function" in data):
        for key in ("tools", "functions"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
    items = data if isinstance(data, list) else [data]
    functions: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            raise ConversionError(f"OpenAI input: expected a tool object, got {type(item).__name__}")
        if item.get("type", "function") != "function":
            raise ConversionError(f"OpenAI input: only function tools can be converted, got type {item.get('type')!r}")
        function = item.get("function", item)
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise ConversionError(f"OpenAI input: a function needs a non-empty 'name': {str(item)[:120]}")
        functions.append(function)
    return functions


def openai_tools(
    data: Any, pool: DefinitionPool, access: Mapping[str, Access] | None = None
) -> list[ToolSpec]:
    """Tool specs of every function in `data`; shared definitions go to `pool`.

    Raises:
        ConversionError: malformed input, or parameters that are not a valid object schema.
    """
    access = access or {}
    tools = []
    for function in openai_functions(data):
        name = function["name"]
        params = function.get("parameters")
        if params is None:
            params = {"type": "object", "properties": {}}
        if not isinstance(params, dict) or params.get("type", "object") != "object":
            raise ConversionError(f"{name}: 'parameters' must be an object schema")
        params = normalise_dialect(params)
        check_schema(params, name)
        params = pool.absorb({"type": "object", **params}, name)
        tools.append(ToolSpec(
            name=name,
            description=str(function.get("description") or ""),
            parameters=params,
            access=access.get(name),
        ))
    return tools
