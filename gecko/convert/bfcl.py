"""BFCL (Gorilla) function docs → tool specs, and BFCL possible answers → concrete arguments.

Accepted shapes: one function doc `{name, description, parameters, [response]}`, a list of them,
or BFCL task entries `{id, function: [...]}` (their functions are used). The multi-turn docs'
`response` block becomes the result schema. See `gecko.convert.gorilla` for the type mapping.

A single-turn ground truth lists the allowed values of each parameter (`{param: [v1, v2, …]}`); `""`
among them means the parameter may be left out. A dict value (or a dict inside a list value) holds
allowed values per key, resolved the same way one level deep: the official checker compares anything
deeper as a plain literal.

Java and JavaScript docs (`language="java"|"javascript"`, BFCL's simple_java / simple_javascript) declare
the language's own types (`String`, `long`, `ArrayList`, `HashMap`; `Boolean`, `array`, `dict`, `any`).
BFCL's checker reads every such argument as a *string of source* in that language (`"42L"`,
`"new ArrayList<>(Arrays.asList(1, 2))"`, `"{a: 1}"`) and converts it by the declared type; a value
that is not a string fails its type check. So each parameter becomes `"type": "string"`, the declared
type is kept as `x-bfcl-type` (items: `x-bfcl-items-type`), and the descriptions get the notes BFCL's
generator shows function-calling models (the language, "… type parameter in string representation",
the item type or the dict's entry schema, which are not part of the string's type).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

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


SourceLanguage = Literal["python", "java", "javascript"]
"""The language a BFCL function doc is written in (`python` docs use Gorilla types, see `gecko.convert.gorilla`)."""
_LANGUAGE_NAMES = {"java": ("Java 8 SDK", "Java", ("ArrayList", "Array")), "javascript": ("JavaScript", "JavaScript", ("array",))}


def _source_parameter(node: Mapping[str, Any], language: str) -> dict[str, Any]:
    _, short, listy = _LANGUAGE_NAMES[language]
    declared = node.get("type", "any")
    out = {k: v for k, v in node.items() if k not in ("type", "items", "properties", "required", "description")}
    description = str(node.get("description") or "")
    if declared == "any":
        description += f" This parameter can be of any type of {short} object in string representation."
    else:
        description += f" This is {short} {declared} type parameter in string representation."
    items = node.get("items")
    items_type = items.get("type") if isinstance(items, Mapping) else None
    if declared in listy and items_type is not None:
        description += f" The list elements are of type {items_type}; they are not in string representation."
    if language == "javascript" and declared == "dict" and isinstance(node.get("properties"), Mapping):
        entries = json.dumps(node["properties"])
        description += f" The dictionary entries have the following schema; they are not in string representation. {entries}"
    return {"type": "string", "description": description, **out, "x-bfcl-type": declared,
            **({"x-bfcl-items-type": items_type} if items_type is not None else {})}


def source_language_doc(doc: Mapping[str, Any], language: SourceLanguage) -> dict[str, Any]:
    """A Java/JavaScript function doc as BFCL shows it to function-calling models: every parameter a string of
    source, its declared type kept as `x-bfcl-type`, the notes added to the descriptions (a Python doc is
    returned as it is).

    Raises:
        ConversionError: parameters that are not an object.
    """
    if language == "python":
        return dict(doc)
    params = doc.get("parameters") or {"type": "dict", "properties": {}}
    properties = (params.get("properties") or {}) if isinstance(params, Mapping) else None
    if not isinstance(properties, Mapping) or not all(isinstance(node, Mapping) for node in properties.values()):
        raise ConversionError(f"{doc.get('name')}: parameters must be an object with properties")
    converted = {name: _source_parameter(node, language) for name, node in properties.items()}
    hint = f" Note that the provided function is in {_LANGUAGE_NAMES[language][0]} syntax."
    return {**doc, "description": str(doc.get("description") or "") + hint,
            "parameters": {**params, "properties": converted}}


def bfcl_tool(doc: Mapping[str, Any], access: Access | None = None, language: SourceLanguage = "python") -> ToolSpec:
    """One BFCL function doc as a tool spec.

    Args:
        doc: The function doc.
        access: Read/write, when known.
        language: The doc's language; Java/JavaScript parameters become strings of source
            (`source_language_doc`).

    Raises:
        ConversionError: a missing name, non-object parameters or an unknown Gorilla type.
    """
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise ConversionError(f"BFCL function doc without a name: {str(dict(doc))[:120]}")
    doc = source_language_doc(doc, language)
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


def bfcl_tools(
    data: Any, access: Mapping[str, Access] | None = None, language: SourceLanguage = "python"
) -> list[ToolSpec]:
    """Tool specs of every function doc in `data`; `access` maps original names to read/write; `language` is the
    docs' language (see `bfcl_tool`)."""
    access = access or {}
    return [bfcl_tool(doc, access.get(str(doc.get("name"))), language) for doc in bfcl_functions(data)]


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
