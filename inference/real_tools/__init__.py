"""Real-tool backends: execute tool calls on real tools (BFCL multi-turn classes; later tau2 and hybrids)."""

from inference.real_tools.base import RealToolBackend, ToolCall, ToolKind, ToolResult

__all__ = ["RealToolBackend", "ToolCall", "ToolKind", "ToolResult"]
