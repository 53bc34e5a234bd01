"""Gecko over the Model Context Protocol: streamable HTTP inside the app (`/mcp`, `/mcp/{toolkit}`) and stdio.

See `README.md` in this package for the session mapping and a client configuration.
"""

from gecko.mcp.catalog import McpCatalog, McpCatalogs
from gecko.mcp.server import McpBinding, build_server

__all__ = ["McpBinding", "McpCatalog", "McpCatalogs", "build_server"]
