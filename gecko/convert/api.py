"""One call per input format: tool definitions in, an OpenAPI 3.1 document (a dict) out.

Every `from_*` function takes the same keyword options:

- `title`, `description`, `version`: the document's `info`;
- `access`: original tool name → `read`/`write`, overriding what the source says;
- `inferrer`: a `ResponseInferrer` that fills in result schemas the source does not declare
  (without one those tools get `GENERIC_RESPONSE`);
- `info_extensions`: extra `x-…` keys of `info` (e.g. `x-gecko-default-state`);
- `validate`: check the result with openapi-spec-validator (default on).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gecko.convert.bfcl import SourceLanguage, bfcl_tools
from gecko.convert.callables import callable_tools
from gecko.convert.document import build_document, validate_document
from gecko.convert.infer import ResponseInferrer
from gecko.convert.mcp import mcp_tools
from gecko.convert.model import Access, ToolkitSpec, ToolSpec
from gecko.convert.openai_tools import openai_tools
from gecko.convert.schema import DefinitionPool
from gecko.convert.xlam import xlam_tools

AccessMap = Mapping[str, Access]


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
    """The OpenAPI document of `tools`: the last step of every `from_*` function.

    An empty `tools` gives a valid document with no operations (BFCL has tasks that offer none).

    Raises:
        ConversionError: duplicate names, a bad extension key, or (with `validate`) an
            invalid document.
    """
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


def from_openai(
    data: Any,
    *,
    title: str,
    description: str = "",
    version: str = "1.0.0",
    access: AccessMap | None = None,
    inferrer: ResponseInferrer | None = None,
    info_extensions: Mapping[str, Any] | None = None,
    validate: bool = True,
) -> dict[str, Any]:
    """Toolkit from OpenAI tool/function definitions (shapes: `gecko.convert.openai_tools`)."""
    pool = DefinitionPool()
    tools = openai_tools(data, pool, access)
    return toolkit_document(
        tools, title=title, description=description, version=version, schemas=pool.schemas,
        inferrer=inferrer, info_extensions=info_extensions, validate=validate,
    )


def from_mcp(
    data: Any,
    *,
    title: str,
    description: str = "",
    version: str = "1.0.0",
    access: AccessMap | None = None,
    inferrer: ResponseInferrer | None = None,
    info_extensions: Mapping[str, Any] | None = None,
    validate: bool = True,
) -> dict[str, Any]:
    """Toolkit from an MCP `tools/list` result (shapes: `gecko.convert.mcp`)."""
    pool = DefinitionPool()
    tools = mcp_tools(data, pool, access)
    return toolkit_document(
        tools, title=title, description=description, version=version, schemas=pool.schemas,
        inferrer=inferrer, info_extensions=info_extensions, validate=validate,
    )


def from_bfcl(
    data: Any,
    *,
    title: str,
    description: str = "",
    version: str = "1.0.0",
    access: AccessMap | None = None,
    inferrer: ResponseInferrer | None = None,
    info_extensions: Mapping[str, Any] | None = None,
    validate: bool = True,
    language: SourceLanguage = "python",
) -> dict[str, Any]:
    """Toolkit from BFCL function docs or task entries (shapes: `gecko.convert.bfcl`; `language`: the docs' language,
    Java/JavaScript parameters become strings of source)."""
    return toolkit_document(
        bfcl_tools(data, access, language), title=title, description=description, version=version,
        inferrer=inferrer, info_extensions=info_extensions, validate=validate,
    )


def from_callables(
    funcs: Sequence[Callable[..., Any]] | Mapping[str, Callable[..., Any]],
    *,
    title: str,
    description: str = "",
    version: str = "1.0.0",
    access: AccessMap | None = None,
    inferrer: ResponseInferrer | None = None,
    info_extensions: Mapping[str, Any] | None = None,
    validate: bool = True,
) -> dict[str, Any]:
    """Toolkit from Python callables (rules: `gecko.convert.callables`).

    Args:
        funcs: functions or bound methods (named by `__name__`), or a mapping tool name → callable.
        title: the document's `info.title`.
        description: the document's `info.description`.
        version: the document's `info.version`.
        access: tool name → `read`/`write`, emitted as `x-gecko-access`.
        inferrer: infers result schemas for callables without a return annotation.
        info_extensions: extra `x-…` keys of `info`, e.g. `{"x-gecko-default-state": db}`.
        validate: check the document with openapi-spec-validator.

    Returns:
        The OpenAPI 3.1 document; write it with `write_document`.

    Raises:
        ConversionError: a callable or type that cannot be converted, or an invalid document.
    """
    tools, schemas = callable_tools(funcs, access)
    return toolkit_document(
        tools, title=title, description=description, version=version, schemas=schemas,
        inferrer=inferrer, info_extensions=info_extensions, validate=validate,
    )


def from_xlam(
    data: Any,
    *,
    title: str,
    description: str = "",
    version: str = "1.0.0",
    access: AccessMap | None = None,
    inferrer: ResponseInferrer | None = None,
    info_extensions: Mapping[str, Any] | None = None,
    validate: bool = True,
) -> dict[str, Any]:
    """Toolkit from xLAM / APIGen tool definitions (shapes and type strings: `gecko.convert.xlam`)."""
    pool = DefinitionPool()
    tools = xlam_tools(data, pool, access)
    return toolkit_document(
        tools, title=title, description=description, version=version, schemas=pool.schemas,
        inferrer=inferrer, info_extensions=info_extensions, validate=validate,
    )
