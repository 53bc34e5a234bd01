"""`x-gecko-upstream`: the real service behind a toolkit, for hybrid and passthrough sessions.

Declared in the toolkit's `info` (operator-controlled: sessions cannot name an upstream). Forms:

```yaml
x-gecko-upstream: {type: mcp-stdio, command: npx, args: [-y, "@modelcontextprotocol/server-memory"], env: {}, cwd: null}
x-gecko-upstream: {type: mcp-http, url: "http://127.0.0.1:9000/mcp", headers: {}}
x-gecko-upstream: {type: http, base_url: "https://api.example.com/v1", headers: {}}   # OpenAPI toolkits
x-gecko-upstream: "https://api.example.com/v1"        # shorthand: an http(s) URL is an HTTP base URL …
x-gecko-upstream: "npx -y @modelcontextprotocol/server-memory"   # … anything else an MCP server command
```
"""

from __future__ import annotations

import shlex
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

UPSTREAM_KEY = "x-gecko-upstream"


class McpStdioUpstream(BaseModel):
    """An MCP server Gecko starts as a child process and speaks to over stdio."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["mcp-stdio"] = "mcp-stdio"
    command: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    """Added to Gecko's own environment."""
    cwd: str | None = None


class McpHttpUpstream(BaseModel):
    """An MCP server reached over streamable HTTP."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["mcp-http"] = "mcp-http"
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)


class HttpUpstream(BaseModel):
    """The real HTTP API an OpenAPI toolkit describes: the operation's method and path under `base_url`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["http"] = "http"
    base_url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)


UpstreamSpec = Annotated[McpStdioUpstream | McpHttpUpstream | HttpUpstream, Field(discriminator="type")]
_ADAPTER: TypeAdapter[McpStdioUpstream | McpHttpUpstream | HttpUpstream] = TypeAdapter(UpstreamSpec)


class UpstreamSpecError(ValueError):
    """A toolkit's `x-gecko-upstream` cannot be used."""


def parse_upstream(value: Any) -> McpStdioUpstream | McpHttpUpstream | HttpUpstream:
    """The upstream a toolkit declares.

    Raises:
        UpstreamSpecError: not one of the forms in this module's docstring.
    """
    if isinstance(value, str):
        if value.startswith(("http://", "https://")):
            value = {"type": "http", "base_url": value}
        else:
            try:
                argv = shlex.split(value)
            except ValueError as exc:
                raise UpstreamSpecError(f"{UPSTREAM_KEY}: {exc}") from None
            if not argv:
                raise UpstreamSpecError(f"{UPSTREAM_KEY}: empty command")
            value = {"type": "mcp-stdio", "command": argv[0], "args": argv[1:]}
    try:
        return _ADAPTER.validate_python(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors())
        raise UpstreamSpecError(f"{UPSTREAM_KEY}: {problems}") from None
