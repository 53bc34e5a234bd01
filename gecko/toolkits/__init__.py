"""Toolkits: OpenAPI documents loaded, validated and compiled once at start-up."""

from gecko.toolkits.loader import ToolkitLoadError, load_toolkits
from gecko.toolkits.model import Operation, Parameter, Toolkit
from gecko.toolkits.registry import ToolkitRegistry

__all__ = ["Operation", "Parameter", "Toolkit", "ToolkitLoadError", "ToolkitRegistry", "load_toolkits"]
