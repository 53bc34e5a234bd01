"""`GeckoToolBackend`: the executor's backend over one Gecko session (simulated tools)."""

from __future__ import annotations

from typing import Any

from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoError
from inference.tools.catalog import CatalogTool, ToolCatalog
from inference.tools.execution import (
    ErrorKind,
    ToolError,
    ToolInfrastructureError,
    ToolOutcome,
    error_content,
)
from inference.tools.faults import default_error_text
from utils.faults import SERVICE_ERROR_STATUSES, Injection, service_error
from utils.jsonutil import dumps_compact


def _errors(raw: list[dict[str, Any]]) -> tuple[ToolError, ...]:
    return tuple(ToolError(str(e.get("message", "")), str(e.get("pointer", "")), str(e.get("keyword", "")),
                           str(e.get("source", ""))) for e in raw)


class GeckoToolBackend:
    """Runs calls as `POST /{toolkit}/{operationId}` in one session.

    Args:
        client: The shared Gecko client.
        session_id: The session the calls belong to (one attempt's fork, in GATS).
    """

    def __init__(self, client: GeckoClient, session_id: str) -> None:
        self.client = client
        self.session_id = session_id

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        """Call the tool; 422 and other refusals of the call come back as outcomes the agent can read.

        Raises:
            ToolInfrastructureError: Gecko failed or the session is gone (the `GeckoError` is its cause).
        """
        try:
            response = await self.client.call_tool(self.session_id, tool.toolkit, tool.operation_id, arguments,
                                                    message)
        except GeckoError as exc:
            raise ToolInfrastructureError(str(exc)) from exc
        if response.ok:
            return ToolOutcome(True, dumps_compact(response.body), body=response.body, status=200, fault=response.fault)
        if response.tool_error:
            return ToolOutcome(False, dumps_compact(response.body), body=response.body, status=response.status,
                               error_kind="tool_error", fault=response.fault)
        errors = _errors(response.errors)
        title = str(response.body.get("title", "Error")) if isinstance(response.body, dict) else "Error"
        kind: ErrorKind = "invalid_arguments" if response.status == 422 else (
            "unknown_tool" if response.status == 404 else "rejected")
        content = error_content(title, response.detail, errors)
        if response.fault is not None and response.status in SERVICE_ERROR_STATUSES:
            # an injected fault: the same text a real-tool bridge shows for it (`inference.tools.faults`)
            kind, content = "service_error", default_error_text(service_error(Injection.from_public(response.fault)))
        return ToolOutcome(False, content, body=response.body, status=response.status, error_kind=kind,
                           errors=errors, fault=response.fault)


async def fetch_catalog(client: GeckoClient, toolkits: list[str]) -> ToolCatalog:
    """The catalog of the given toolkits, from `GET /toolkits/{name}` each.

    Raises:
        GeckoNotFoundError: Gecko does not serve one of the toolkits.
        GeckoUnavailableError: Gecko failed.
    """
    return ToolCatalog.from_toolkits([await client.toolkit(name) for name in toolkits])
