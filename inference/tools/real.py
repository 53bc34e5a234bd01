"""`RealToolsBackend`: the executor's backend interface over a `RealToolBackend` (real tools of one task).

Calls are dispatched by the tool's original name (for BFCL multi-turn, the method name of a tool class)
with the parsed literal arguments. Real tools are in-memory objects that answer in microseconds, so they
run on the event loop; a backend whose tools do I/O should wrap `execute` in `asyncio.to_thread`.
"""

from __future__ import annotations

from typing import Any

from inference.real_tools.base import RealToolBackend, ToolCall, ToolKind
from inference.tools.catalog import ToolSpec
from inference.tools.execution import ToolError, ToolOutcome


class RealToolsBackend:
    """Executes resolved calls on real tools.

    Args:
        tools: The real tools of one task (not shared between tasks or workers).
    """

    def __init__(self, tools: RealToolBackend) -> None:
        self.tools = tools

    async def execute(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome:
        """Run the call on the real tools; a tool error is an outcome with `error_kind="tool_error"`."""
        result = self.tools.execute(ToolCall(tool.original_name, arguments))
        if result.error:
            error = ToolError(result.content, source="real")
            return ToolOutcome(False, result.content, body=result.content, error_kind="tool_error", errors=(error,))
        return ToolOutcome(True, result.content, body=result.content)

    def kind(self, tool: ToolSpec) -> ToolKind:
        """Whether the real tool reads or writes (as the real backend knows it; `write` when unsure)."""
        return self.tools.kind(tool.original_name)
