"""The MCP server over Gecko's pipeline (official `mcp` SDK, low-level `Server`): tools/list and tools/call.

A call goes through `CallRunner.run`, exactly as `POST /{toolkit}/{operationId}` does: syntactic and semantic
validation, synthesis (or the upstream in hybrid sessions), state, history, usage. A rejected call is a tool
result with `isError: true` whose text is the problem detail (what MCP clients show the model); a success
carries `structuredContent` (object responses) and the JSON text.

Which session and which tools a request sees comes from a `binding` callable, so the same server serves
streamable HTTP (per request, from the HTTP layer) and stdio (one session per process).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server

from gecko.api.deps import LIMIT_FLAGS
from gecko.mcp.catalog import McpCatalog
from gecko.mcp.conventions import error_message, in_band_error
from gecko.mcp.search import SEARCH_TOOL, call_search, search_tool_listing
from gecko.pipeline.runner import CallOutcome, CallRunner
from gecko.sessions.model import SessionBusy, SessionNotFound, VersionConflict
from gecko.toolkits.conventions import convention_of
from gecko.toolkits.model import Operation
from gecko.toolkits.registry import ToolNotFound
from gecko.toolkits.search import ToolIndex
from gecko.upstream.errors import NoUpstream, UpstreamError
from utils.faults import notice_text
from utils.httpstatus import is_success
from utils.jsonlimits import JsonLimitExceeded, JsonLimits, JsonValueRejected, check_json

log = logging.getLogger(__name__)
META_PREFIX = "gecko/"
NO_SESSION = ("No Gecko session is bound to this MCP connection: initialize a session first (Gecko creates "
              "one, or binds the one named in the X-Session-ID header), or send X-Session-ID on every request.")


@dataclass(frozen=True)
class McpBinding:
    """What one MCP request works on."""

    catalog: McpCatalog
    runner: CallRunner
    session_id: str | None
    limits: JsonLimits | None = None
    """JSON limits for a call's arguments; None where the transport checked the whole message (HTTP)."""
    search: ToolIndex | None = None
    """Offer `search_tools` (the endpoint of every toolkit only: a twin lists exactly its real server's tools)."""


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tool_error(message: str, **meta: Any) -> types.CallToolResult:
    """A tool result the model reads as an error."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], isError=True,
                                _meta={META_PREFIX + k: v for k, v in meta.items()} or None)


def render_outcome(outcome: CallOutcome, tool_name: str, operation: Operation | None = None,
                   arguments: dict[str, Any] | None = None) -> types.CallToolResult:
    """A pipeline outcome as an MCP tool result.

    An injected fault is recorded under `_meta["gecko/fault"]`; a blocking one is an error result with the
    service's error text; a constraint notice is an extra text block (so `structuredContent` still fits the
    tool's `outputSchema`). The tool's own errors follow its error convention (`gecko.mcp.conventions`) when
    `operation` has one.
    """
    meta = {META_PREFIX + "state_version": outcome.state_version,
            META_PREFIX + "semantic": outcome.semantic_outcome}
    if outcome.fault is not None:
        meta[META_PREFIX + "fault"] = outcome.fault
    if outcome.service_error is not None:
        error = outcome.service_error
        problem = {"type": f"urn:gecko:problem:{error.slug}", "title": error.title, "status": error.status,
                   "detail": error.detail, "tool": tool_name}
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{error.title}: {error.detail}")],
                                    isError=True, _meta={**meta, META_PREFIX + "problem": problem})
    result = _success(outcome, tool_name, meta, operation, arguments)
    if outcome.notice is not None and not result.isError:
        result.content.append(types.TextContent(type="text", text=notice_text(outcome.notice).strip()))
    return result


def _success(outcome: CallOutcome, tool_name: str, meta: dict[str, Any], operation: Operation | None,
             arguments: dict[str, Any] | None) -> types.CallToolResult:
    if outcome.upstream is not None:
        return outcome.upstream.mcp_result(meta)
    convention = convention_of(operation)
    if outcome.tool_error:  # the simulated API's own error answer (its declared 404): the body, as an error result
        text = error_message(convention, outcome.body, arguments) if convention is not None else _text(outcome.body)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True,
                                    _meta={**meta, META_PREFIX + "tool_error": outcome.status})
    if not is_success(outcome.status):
        problem = {"type": "urn:gecko:problem:invalid-arguments", "title": "Invalid tool arguments",
                   "status": outcome.status, "detail": outcome.detail(), "tool": tool_name, "errors": outcome.errors()}
        return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.detail())], isError=True,
                                    _meta={**meta, META_PREFIX + "problem": problem})
    body = in_band_error(convention, outcome.body, arguments)
    return types.CallToolResult(content=[types.TextContent(type="text", text=_text(body))],
                                structuredContent=body if isinstance(body, dict) else None, isError=False,
                                _meta=meta)


async def call_tool(binding: McpBinding, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run one `tools/call`; every failure the agent or its operator can act on becomes an error result."""
    if name == SEARCH_TOOL and binding.search is not None:
        return await call_search(binding.search, binding.catalog, arguments)
    try:
        operation = binding.catalog.get(name)
    except ToolNotFound as exc:
        hint = f"; did you mean: {', '.join(exc.suggestions)}" if exc.suggestions else ""
        return tool_error(f"Unknown tool {name!r}{hint}.")
    if binding.session_id is None:
        return tool_error(NO_SESSION)
    if binding.limits is not None:
        try:
            check_json(arguments, binding.limits, values=True)
        except JsonLimitExceeded as exc:
            return tool_error(f"The arguments have {exc}; this server accepts no more ({LIMIT_FLAGS[exc.limit]}).")
        except JsonValueRejected as exc:
            return tool_error(f"{exc}.")
    store_down = binding.runner.store.unavailable_errors
    try:
        outcome = await binding.runner.run(binding.session_id, operation, arguments if arguments is not None else {})
    except store_down as exc:
        return tool_error(f"The session store is unreachable ({type(exc).__name__}); retry the call.", retryable=True)
    except SessionNotFound:
        return tool_error(f"The Gecko session {binding.session_id} does not exist any more (deleted or expired); "
                          "start a new MCP session.")
    except ToolNotFound as exc:
        return tool_error(f"{exc}.")
    except (SessionBusy, VersionConflict) as exc:
        return tool_error(f"The session is busy ({exc}); retry the call.", retryable=True)
    except NoUpstream as exc:
        return tool_error(f"{exc}.")
    except UpstreamError as exc:
        return tool_error(f"The real service behind {operation.tool_name} failed: {exc}", retryable=True)
    return render_outcome(outcome, operation.tool_name, operation, arguments)


def build_server(binding: Callable[[], McpBinding], *, version: str, instructions: str | None = None) -> Server:
    """A low-level MCP server whose handlers read their session and tools from `binding()`."""
    server: Server = Server("gecko", version=version, instructions=instructions or (
        "Simulated tools (Gecko). Arguments are validated against each tool's input schema; a rejected call "
        "returns an error result that lists every problem."))

    @server.list_tools()
    async def _list_tools() -> types.ListToolsResult:
        current = binding()
        listing = await asyncio.to_thread(lambda: current.catalog.listing)  # the first loads toolkits: off the loop
        return types.ListToolsResult(tools=[search_tool_listing(), *listing] if current.search is not None else listing)

    @server.call_tool(validate_input=False)  # the pipeline validates, and reports every violation at once
    async def _call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await call_tool(binding(), name, arguments)

    return server
