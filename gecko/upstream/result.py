"""What a real upstream answered, in the two shapes Gecko serves: an MCP tool result and an HTTP response."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mcp import types


@dataclass(frozen=True)
class UpstreamResult:
    """One real call's result.

    `body` is the JSON value recorded in the session (an MCP server's `structuredContent`, else its text
    parsed as JSON when it is JSON, else the text; an HTTP service's JSON body, else its text).
    """

    body: Any
    is_error: bool = False
    content: list[dict[str, Any]] | None = None
    """An MCP upstream's content blocks, relayed unchanged to MCP clients."""
    structured: dict[str, Any] | None = None
    status: int = 200
    """An HTTP upstream's status (200 for MCP upstreams)."""
    headers: dict[str, str] = field(default_factory=dict)

    def mcp_result(self, meta: dict[str, Any]) -> types.CallToolResult:
        """The result for an MCP client: the upstream's own blocks when it was an MCP server."""
        if self.content is not None:
            blocks = [types.TextContent(type="text", text="")] if not self.content else self.content
        else:
            text = self.body if isinstance(self.body, str) else json.dumps(self.body, ensure_ascii=False)
            blocks = [types.TextContent(type="text", text=text)]
        structured = self.structured
        if structured is None and self.content is None and isinstance(self.body, dict):
            structured = self.body
        return types.CallToolResult.model_validate({
            "content": blocks, "structuredContent": structured, "isError": self.is_error,
            "_meta": {**meta, "gecko/source": "upstream"}})

    def http_body(self) -> Any:
        """The JSON body for Gecko's HTTP routes."""
        if self.content is None:
            return self.body
        if self.structured is not None and not self.is_error:
            return self.structured
        return {"content": self.content, "isError": self.is_error}

    def recorded(self) -> Any:
        """What the session records as the real result."""
        return {"error": self.body} if self.is_error else self.body


def parse_text(text: str) -> Any:
    """`text` as JSON when it is JSON, else the text itself."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null"):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text
