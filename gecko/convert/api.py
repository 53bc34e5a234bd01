"""One call per input format: tool definitions in, an OpenAPI 3.1 document (a dict) out.

Every function takes the same keyword options:

- `title`, `description`, `version`: the document's `info`;
- `access`: original tool name → `read`/`write`, overriding what the source says;
- `inferrer`: a `ResponseInferrer` that fills in result schemas the source does not declare
  (without it those tools get `GENERIC_RESPONSE`);
- `info_extensions`: extra `x-…` keys of `info` (e.g. `x-gecko-default-state`);
- `validate`: check the result with openapi-spec-validator (default on).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gecko.convert.bfcl import bfcl_tools
from gecko.convert.callables import callable_tools
from gecko.convert.document import build_document, validate_document
from gecko.convert.infer import ResponseInferrer
from gecko.convert.mcp import mcp_tools
from gecko.convert.model import Access, ConversionError, ToolkitSpec, ToolSpec
from gecko.convert.openai_tools import openai_tools
from gecko.convert.schema import DefinitionPool


def toolkit_document(
    tools: Sequence[ToolSpec],
    *,
    title: str,
    description: str = "",
    version: str = "1.0.0",
    schemas: Mapping[str, Any] | None = None,
    inferrer: ResponseInferrer | None = None,
    info_extensions: Mapping[str, Any] | None = None,
    validate: bool = True,
) -> dict[str, Any]:
    """The OpenAPI document of `tools` (the last step of every `from_*` function).

    Raises:
        ConversionError: duplicate names, a bad extension key, or (with `validate`) an invalid document.
    """
    if not tools:
        raise ConversionError(f"toolkit {title!r}: no tools to convert")
    spec = ToolkitSpec(
        title=title,
        tools=tuple(tools),
        description=description,
        version=version,
        schemas=dict(schemas or {}),
        info_extensions=dict(info_extensions or {}),
    )
    if inferrer is not None:
        spec = inferrer.apply(spec)
    doc = build_document(spec)
    if validate:
        validate_document(doc)
    return doc


def from_openai(data: Any, *, title: str, access: Mapping[str, Access] | None = None, **options: Any) -> dict[str, Any]:
    """Toolkit from OpenAI tool/function definitions (see `gecko.convert.openai_tools`)."""
    pool = DefinitionPool()
    tools = openai_tools(data, pool, access)
    return toolkit_document(tools, title=title, schemas=pool.schemas, **options)


def from_mcp(data: Any, *, title: str, access: Mapping[str, Access] | None = None, **options: Any) -> dict[str, Any]:
    """Toolkit from an MCP `tools/list` result (see `gecko.convert.mcp`)."""
    pool = DefinitionPool()
    tools = mcp_tools(data, pool, access)
    return toolkit_document(tools, title=title, schemas=pool.schemas, **options)


def from_bfcl(data: Any, *, title: str, access: Mapping[str, Access] | None = None, **options: Any) -> dict[str, Any]:
    """Toolkit from BFCL function docs or task entries (see `gecko.convert.bfcl`)."""
    return toolkit_document(bfcl_tools(data, access), title=title, **options)


def from_callables(
    funcs: Sequence[Callable[..., Any]] | Mapping[str, Callable[..., Any]],
    *,
    title: str,
    access: Mapping[str, Access] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Toolkit from Python callables (see `gecko.convert.callables`).

    Args:
        funcs: functions or bound methods, or a mapping tool name → callable.
        title: the toolkit's title.
        access: tool name → `read`/`write`, emitted as `x-gecko-access`.
        **options: `description`, `version`, `inferrer`, `info_extensions`, `validate`.
    """
    tools, schemas = callable_tools(funcs, access)
    return toolkit_document(tools, title=title, schemas=schemas, **options)
