"""MCP `tools/list` results → tool specs.

Accepted shapes: the result `{"tools": [...]}`, the whole JSON-RPC response `{"result": {"tools": …}}`,
or a bare list of tools. `inputSchema` is the request body, kept exactly
as declared (no `additionalProperties: false` the server did not state: most servers accept and drop extra
arguments), `outputSchema` (structured content) the result. Access comes from the annotations first:
`readOnlyHint: true` → read, `readOnlyHint: false` or `destructiveHint: true` → write (a hint only a writing tool
can have); without them the server guesses from the name. The annotations are kept in `x-mcp-annotations`, and
what was read from them in `x-gecko-provenance`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gecko.convert.model import Access, ConversionError, ToolSpec
from gecko.convert.schema import DefinitionPool, check_schema, normalise_dialect


def mcp_tool_list(data: Any) -> list[dict[str, Any]]:
    """The tool objects of a `tools/list` result."""
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise ConversionError("MCP input: expected a tools/list result ({\"tools\": [...]})")
    return data


def annotation_access(annotations: Any) -> tuple[Access, str] | None:
    """Read/write kind stated by MCP tool annotations, with the annotation it comes from; None when they say nothing.

    `readOnlyHint` decides when present; otherwise `destructiveHint: true` means a write (the hint is only meaningful
    for tools that change their environment). `idempotentHint` says nothing about the kind.
    """
    if not isinstance(annotations, Mapping):
        return None
    hint = annotations.get("readOnlyHint")
    if hint is True:
        return "read", "annotations.readOnlyHint: true"
    if hint is False:
        return "write", "annotations.readOnlyHint: false"
    if annotations.get("destructiveHint") is True:
        return "write", "annotations.destructiveHint: true"
    return None


def mcp_tools(data: Any, pool: DefinitionPool, access: Mapping[str, Access] | None = None) -> list[ToolSpec]:
    """Tool specs of every tool in `data`; `access` overrides what the annotations say.

    Raises:
        ConversionError: a tool without a name or with an invalid input or output schema.
    """
    access = access or {}
    tools = []
    for tool in mcp_tool_list(data):
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise ConversionError(f"MCP input: a tool needs a non-empty 'name': {str(tool)[:120]}")
        params = tool.get("inputSchema") or {"type": "object", "properties": {}}
        if not isinstance(params, dict) or params.get("type", "object") != "object":
            raise ConversionError(f"{name}: 'inputSchema' must be an object schema")
        params = normalise_dialect(params)
        check_schema(params, name)
        output = tool.get("outputSchema")
        if output is not None:
            if not isinstance(output, dict):
                raise ConversionError(f"{name}: 'outputSchema' must be an object schema")
            output = normalise_dialect(output)
            check_schema(output, f"{name} outputSchema")
            output = pool.absorb(output, name)
        annotations = tool.get("annotations")
        stated = annotation_access(annotations)
        provenance = {}
        if name in access:
            provenance["access"] = "declared by the user (--access)"
        elif stated is not None:
            provenance["access"] = stated[1]
        tools.append(ToolSpec(
            name=name,
            description=str(tool.get("description") or ""),
            parameters=pool.absorb({"type": "object", **params}, name),
            response=output,
            access=access.get(name, stated[0] if stated is not None else None),
            title=str(tool.get("title") or (annotations or {}).get("title") or ""),
            extensions={"x-mcp-annotations": annotations} if isinstance(annotations, dict) else {},
            close_arguments=False,
            provenance=provenance,
        ))
    return tools
