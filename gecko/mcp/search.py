"""The MCP tool `search_tools` on `/mcp` (and stdio without `--toolkit`): agents find tools in-band.

It ranks every tool of the endpoint with the server's tool index (`gecko.toolkits.search`) and answers with the
MCP names to call them by at this endpoint. It needs no session: searching changes nothing.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp import types

from gecko.mcp.catalog import McpCatalog
from gecko.toolkits.search import (
    MAX_K,
    MAX_QUERY_CHARS,
    MODES,
    SearchIndexBuilding,
    SearchUnavailable,
    ToolIndex,
)

SEARCH_TOOL = "search_tools"
DEFAULT_K = 10

_ARGUMENTS = ("query", "k", "access", "mode")
_INPUT = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                  "description": "What the tool should do, in words (e.g. 'book a flight', 'list open issues')."},
        "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": DEFAULT_K,
              "description": "How many tools to return."},
        "access": {"type": "string", "enum": ["read", "write"],
                   "description": "Only tools that read (or only tools that write)."},
        "mode": {"type": "string", "enum": list(MODES),
                 "description": "The ranking: bm25 (words), dense (meaning) or hybrid (both); by default bm25 "
                                "(the server's --search-mode)."},
    },
    "required": ["query"],
    "additionalProperties": False,
}
_HIT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The tool's name at this MCP endpoint: call it by this name."},
        "toolkit": {"type": "string"}, "original_name": {"type": "string"}, "app": {"type": "string"},
        "source": {"type": "string"}, "access": {"type": "string", "enum": ["read", "write"]},
        "summary": {"type": "string"}, "score": {"type": "number"},
    },
    "required": ["name", "toolkit", "access", "summary", "score"],
}
_OUTPUT = {"type": "object", "properties": {"tools": {"type": "array", "items": _HIT}}, "required": ["tools"]}


def search_tool_listing() -> types.Tool:
    """The `tools/list` entry of `search_tools`."""
    return types.Tool(
        name=SEARCH_TOOL,
        title="Search tools",
        description=("Search every tool this server offers by what it does; returns the best matches with the "
                     "name to call each by, its read/write kind and a summary. Call it before you act, and again "
                     "whenever you need a tool you have not seen."),
        inputSchema=_INPUT,
        outputSchema=_OUTPUT,
        annotations=types.ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True,
                                          openWorldHint=False),
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


async def call_search(index: ToolIndex, catalog: McpCatalog, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run `search_tools`; bad arguments and a server without the search extra are error results."""
    args = arguments or {}
    query, k, access, mode = args.get("query"), args.get("k", DEFAULT_K), args.get("access"), args.get("mode")
    unknown = sorted(set(args) - set(_ARGUMENTS))
    if unknown:
        return _error(f"search_tools: unknown argument(s) {', '.join(unknown)}; it takes query, k, access and mode.")
    if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY_CHARS:
        return _error(f"search_tools: 'query' must be a non-empty string of at most {MAX_QUERY_CHARS} characters.")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        return _error(f"search_tools: 'k' must be an integer from 1 to {MAX_K}.")
    if access not in (None, "read", "write"):
        return _error("search_tools: 'access' must be 'read' or 'write'.")
    if mode is not None and mode not in MODES:
        return _error(f"search_tools: 'mode' must be one of {', '.join(MODES)}.")
    try:
        hits = await asyncio.to_thread(index.search, query, k, access=access, mode=mode)
    except SearchUnavailable as exc:
        return _error(f"search_tools is unavailable on this server: {exc}")
    except SearchIndexBuilding as exc:
        return _error(f"search_tools is not ready yet: {exc} (retry in about {exc.retry_after} s)")
    tools = []
    for hit in hits:
        name = catalog.name_of(hit.operation)
        if name is not None:
            public = hit.public()
            tools.append({"name": name, **{key: public[key] for key in
                                            ("toolkit", "original_name", "app", "source", "access", "summary", "score")}})
    body = {"tools": tools}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
                                structuredContent=body, isError=False)
