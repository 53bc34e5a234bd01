"""Tools of a task as an agent sees them (catalog, provider-safe names), the one path that executes calls, and
the interface of real tools."""

from inference.tools.catalog import Access, CatalogTool, ToolCatalog
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
from inference.tools.faults import FaultyBackend
from inference.tools.names import assign_agent_names, is_provider_safe, sanitise
from inference.tools.real import RealCall, RealResult, RealTools, RealToolsBackend

__all__ = [
    "Access", "CallRecord", "CatalogTool", "ErrorKind", "FaultyBackend", "RealCall", "RealResult", "RealTools", "RealToolsBackend",
    "ToolBackend", "ToolCallRequest", "ToolCatalog", "ToolError", "ToolExecutor", "ToolInfrastructureError",
    "ToolOutcome", "assign_agent_names", "error_content", "is_provider_safe", "sanitise",
]
