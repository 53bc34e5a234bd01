"""Python callables → tool specs: signature, type hints (pydantic models included) and docstring.

Parameter and result schemas come from pydantic (`TypeAdapter.json_schemas`, one pass for all
tools, so models used by several tools are defined once under `components/schemas`). Descriptions
come from the docstring (Google, NumPy, reST or Epydoc style, via `docstring-parser`): the short
and long description describe the tool, `Args:` its parameters, `Returns:` its result.

Rules: a leading unannotated `self`/`cls` is skipped; `*args` and positional-only parameters are
refused (arguments arrive by name); `**kwargs` lets the request body take extra keys; an
unannotated parameter accepts any JSON value; the return annotation gives the result schema
(`None` → `null`; missing or `Any` → no schema, so the generic one is used).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import PydanticUserError, TypeAdapter
from pydantic.errors import PydanticInvalidForJsonSchema
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticSerializationError, to_jsonable_python

from gecko.convert.model import Access, ConversionError, ToolSpec
from gecko.convert.schema import COMPONENTS_PREFIX, component_name, rewrite_refs

_DEFS_PREFIX = "#/$defs/"
_EMPTY = inspect.Parameter.empty


class _NoFieldTitles(GenerateJsonSchema):
    """pydantic's generator without the `title` it derives from every field name."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


@dataclass(frozen=True)
class _Param:
    name: str
    annotation: Any
    default: Any
    description: str


@dataclass(frozen=True)
class _Function:
    name: str
    description: str
    params: tuple[_Param, ...]
    extra_keys: bool
    returns: Any
    returns_description: str


def _read_function(name: str, func: Callable[..., Any]) -> _Function:
    try:
        signature = inspect.signature(func)
        hints = typing.get_type_hints(func, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise ConversionError(f"{name}: cannot read the signature or type hints: {exc}") from exc
    import docstring_parser  # here, not at import: the server imports this package (0.1-0.3 s) and never converts

    doc = docstring_parser.parse(inspect.getdoc(func) or "")
    arg_docs = {p.arg_name: (p.description or "").strip() for p in doc.params}
    params: list[_Param] = []
    extra_keys = False
    for index, param in enumerate(signature.parameters.values()):
        if index == 0 and param.name in ("self", "cls") and param.annotation is _EMPTY:
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            extra_keys = True
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            raise ConversionError(f"{name}: parameter {param.name!r} cannot be passed by name ({param.kind.description})")
        params.append(_Param(param.name, hints.get(param.name, Any), param.default, arg_docs.get(param.name, "")))
    description = "\n\n".join(part.strip() for part in (doc.short_description, doc.long_description) if part)
    returns = hints.get("return", _EMPTY)
    return _Function(
        name=name,
        description=description,
        params=tuple(params),
        extra_keys=extra_keys,
        returns=returns,
        returns_description=((doc.returns.description if doc.returns else "") or "").strip(),
    )


def _jsonable_default(value: Any) -> tuple[bool, Any]:
    if value is _EMPTY:
        return False, None
    try:
        return True, to_jsonable_python(value)
    except (PydanticSerializationError, TypeError, ValueError):
        return False, None


def _named(funcs: Sequence[Callable[..., Any]] | Mapping[str, Callable[..., Any]]) -> list[tuple[str, Callable[..., Any]]]:
    if isinstance(funcs, Mapping):
        return [(str(k), v) for k, v in funcs.items()]
    return [(getattr(f, "__name__", ""), f) for f in funcs]


def callable_tools(
    funcs: Sequence[Callable[..., Any]] | Mapping[str, Callable[..., Any]],
    access: Mapping[str, Access] | None = None,
) -> tuple[list[ToolSpec], dict[str, Any]]:
    """Tool specs for Python callables, plus the shared definitions they reference.

    Args:
        funcs: functions or bound methods (named by `__name__`), or a mapping tool name → callable.
        access: tool name → `read`/`write`, emitted as `x-gecko-access`.

    Returns:
        The tool specs in input order, and the `components/schemas` they reference.

    Raises:
        ConversionError: a callable without a name, an unsupported parameter kind, or a type
            pydantic cannot describe in JSON Schema.
    """
    access = access or {}
    functions = []
    for name, func in _named(funcs):
        if not name or not callable(func):
            raise ConversionError(f"not a named callable: {func!r}")
        functions.append(_read_function(name, func))
    inputs: list[tuple[tuple[int, str], Any, TypeAdapter[Any]]] = []
    try:
        for i, fn in enumerate(functions):
            inputs += [((i, p.name), "validation", TypeAdapter(p.annotation)) for p in fn.params]
            if fn.returns not in (_EMPTY, Any):
                inputs.append(((i, ""), "serialization", TypeAdapter(fn.returns)))
        schemas, defs = TypeAdapter.json_schemas(inputs, schema_generator=_NoFieldTitles)
    except (PydanticUserError, PydanticInvalidForJsonSchema, TypeError) as exc:
        raise ConversionError(f"cannot describe a parameter or result type in JSON Schema: {exc}") from exc
    names = {n: component_name(n) for n in defs.get("$defs", {})}
    if len(set(names.values())) != len(names):
        raise ConversionError(f"model names clash once made safe: {sorted(names)}")

    def rename(ref: str) -> str:
        if ref.startswith(_DEFS_PREFIX) and ref[len(_DEFS_PREFIX):] in names:
            return COMPONENTS_PREFIX + names[ref[len(_DEFS_PREFIX):]]
        raise ConversionError(f"unexpected $ref {ref!r} in a generated schema")

    shared = {names[n]: rewrite_refs(s, rename) for n, s in defs.get("$defs", {}).items()}
    tools = []
    for i, fn in enumerate(functions):
        result = schemas.get(((i, ""), "serialization"))
        tools.append(ToolSpec(
            name=fn.name,
            description=fn.description,
            parameters=_parameters(fn, {p.name: rewrite_refs(schemas[((i, p.name), "validation")], rename) for p in fn.params}),
            response=rewrite_refs(result, rename) if result is not None else None,
            response_description=fn.returns_description,
            access=access.get(fn.name),
        ))
    return tools, shared


def _parameters(fn: _Function, types: dict[str, Any]) -> dict[str, Any]:
    """The arguments' object schema: each parameter's type schema plus its description and default."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in fn.params:
        prop = dict(types[p.name])
        if p.description:
            prop["description"] = p.description
        has_default, default = _jsonable_default(p.default)
        if has_default:
            prop["default"] = default
        elif p.default is _EMPTY:
            required.append(p.name)
        properties[p.name] = prop
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    if fn.extra_keys:
        parameters["additionalProperties"] = True
    return parameters
