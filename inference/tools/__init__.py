"""Tools of a task as an agent sees them (catalog, provider-safe names) and the one path that executes calls."""

from inference.tools.catalog import ToolCatalog, ToolSpec
from inference.tools.execution import (
    CallRecord,
    ErrorKind,
    ToolBackend,
    ToolCallRequest,
    ToolError,
    ToolExecutor,
    ToolInfrastructureError,
    ToolOutcome,
    error_content,
)
from inference.tools.names import assign_agent_names, is_provider_safe, sanitise
from inference.tools.real import RealToolsBackend

__all__ = [
    "CallRecord", "ErrorKind", "RealToolsBackend", "ToolBackend", "ToolCallRequest", "ToolCatalog", "ToolError",
    "ToolExecutor", "ToolInfrastructureError", "ToolOutcome", "ToolSpec", "assign_agent_names", "error_content", "is_provider_safe", "sanitise",
]
