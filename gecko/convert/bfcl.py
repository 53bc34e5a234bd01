"""BFCL (Gorilla) function docs → tool specs, and BFCL possible answers → concrete arguments.

Accepted shapes: one function doc `{name, description, parameters, [response]}`, a list of them,
or BFCL task entries `{id, function: [...]}` (their functions are used). The multi-turn docs'
`response` block becomes the result schema. See `gecko.convert.gorilla` for the type mapping.

A single-turn ground truth lists the allowed values of each parameter (`{param: [v1, v2, …]}`); `""`
among them means the parameter may be left out. A dict value (or a dict inside a list value) holds
allowed values per key, resolved the same way one level deep: the official checker compares anything
deeper as a plain literal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gecko.convert.gorilla import gorilla_schema
from gecko.convert.model import Access, ConversionError, ToolSpec


def bfcl_functions(data: Any) -> list[dict[str, Any]]:
    """The function docs in `data` (a doc, a list of docs, a task entry or a list of entries)."""
    items = data if isinstance(data, list) else [data]
    docs: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("function"), list):
            docs.extend(item["function"])
        elif isinstance(item, dict) and "name" in item:
            docs.append(item)
        else:
            raise ConversionError("BFCL input: expected function docs ({name, parameters}) or task entries ({id, function})")
    return docs


def bfcl_tool(doc: Mapping[str, Any], access: Access | None = None) -> ToolSpec:
    """One BFCL function doc as a tool spec.

    Raises:
        ConversionError: a missing name, non-object parameters or an unknown Gorilla type.
    """
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise ConversionError(f"BFCL function doc without a name: {str(dict(doc))[:120]}")
    params = doc.get("parameters") or {"type": "dict", "properties": {}}
    if params.get("type", "dict") not in ("dict", "object"):
        raise ConversionError(f"{name}: parameters must be of type 'dict', got {params.get('type')!r}")
    parameters = gorilla_schema({**params, "type": "dict"}, name, close_objects=True)
    parameters.setdefault("properties", {})
    response = doc.get("response")
    result = gorilla_schema(response, f"{name}/response", close_objects=False) if isinstance(response, dict) else None
    return ToolSpec(
        name=name,
        description=str(doc.get("description") or ""),
        parameters=parameters,
        response=result,
        response_description=str(response.get("description") or "") if isinstance(response, dict) else "",
        access=access,
    )


def bfcl_tools(data: Any, access: Mapping[str, Access] | None = None) -> list[ToolSpec]:
    """Tool specs of every function doc in `data`; `access` maps original names to read/write."""
    access = access or {}
    return [bfcl_tool(doc, access.get(str(doc.get("name")))) for doc in bfcl_functions(data)]


OMITTED = ""
"""A possible answer of `""` means that the parameter may be left out."""


def _first(options: Sequence[Any]) -> tuple[bool, Any]:
    for option in options:
        if option != OMITTED:
            return True, option
    return False, None


def _resolve_dict(allowed: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """Each key's first allowed value, taken literally (one level deep)."""
    chosen = {key: _first(options) for key, options in allowed.items()}
    return {key: value for key, (found, value) in chosen.items() if found}


def answer_value(option: Any) -> Any:
    """One allowed value as a concrete value: dicts (also inside a list) take each key's first allowed value."""
    if isinstance(option, dict):
        return _resolve_dict(option)
    if isinstance(option, list):
        return [_resolve_dict(item) if isinstance(item, dict) else item for item in option]
    return option


def answer_arguments(parameters: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """The first allowed value of each parameter; parameters that may only be left out are left out."""
    chosen: dict[str, Any] = {}
    for name, options in parameters.items():
        found, value = _first(options)
        if found:
            chosen[name] = answer_value(value)
    return chosen
