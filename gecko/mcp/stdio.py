"""`python -m gecko.mcp` / `gecko-mcp`: Gecko as an MCP server over stdio, for desktop clients.

The pipeline runs in this process on the embedded default store (SQLite under the state dir, so a running
HTTP server with the same state dir sees the same sessions). One process is one MCP session is one Gecko
session: created at start, or the existing one named by `--session`. Logs go to stderr; stdout is the
protocol's.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from gecko.app import build_context, serving
from gecko.mcp.catalog import McpCatalogs
from gecko.mcp.server import McpBinding, build_server
from gecko.mcp.stdio_transport import bounded_stdio
from gecko.sessions.service import create_session
from gecko.toolkits.registry import ToolNotFound
from gecko.upstream.pool import SESSION_MODES
from utils.settings import Settings
from utils.settings_cli import add_settings_flags, given_settings, setting_flags

NOT_ON_STDIO = ("host", "port", "workers", "api_key", "api_key_file", "request_read_timeout", "allowed_hosts")
"""Settings of the HTTP listener, which a stdio server has none of (`--max-body-bytes` bounds one stdio line)."""


def build_parser() -> argparse.ArgumentParser:
    """`--toolkit`, `--session`, `--mode`, and the server's settings flags (derived from `Settings`)."""
    p = argparse.ArgumentParser(prog="python -m gecko.mcp",
                                description="Serve Gecko's simulated toolkits over MCP on stdio.")
    p.add_argument("--toolkit", help="serve only this toolkit, under its tools' own names (default: every "
                                     "toolkit, as TOOLKIT__TOOL)")
    p.add_argument("--session", help="bind to this existing Gecko session (default: create one)")
    p.add_argument("--mode", choices=SESSION_MODES, default="simulate",
                   help="mode of the session created: simulate (default), hybrid (real reads through the "
                        "toolkit's x-gecko-upstream, simulated writes) or passthrough")
    add_settings_flags(p, [f for f in setting_flags() if f.field not in NOT_ON_STDIO])
    return p


async def serve(settings: Settings, toolkit: str | None, session: str | None, mode: str = "simulate") -> None:
    """Serve one MCP session on stdin/stdout until the client closes it.

    Raises:
        ToolNotFound: `toolkit` is not loaded.
        LookupError: `session` does not exist in the store.
    """
    ctx = build_context(settings)
    catalog = McpCatalogs(ctx.registry).get(toolkit)
    async with serving(ctx):
        if session is None:
            labels = {"transport": "mcp-stdio", **({"toolkit": toolkit} if toolkit else {})}
            session = (await create_session(ctx.store, {"labels": labels, "mode": mode}, {})).id
        elif await ctx.store.get(session) is None:
            raise LookupError(f"no live Gecko session {session!r} in {settings.store} (state dir {settings.state_dir})")
        print(f"gecko-mcp: session {session}, {len(catalog.tools)} tools", file=sys.stderr, flush=True)
        binding = McpBinding(catalog, ctx.runner, session, limits=settings.json_limits(),
                             search=ctx.search if toolkit is None else None)
        server = build_server(lambda: binding, version=ctx.version, instructions=(
            f"Simulated tools (Gecko), session {session}. Arguments are validated against each tool's input "
            "schema; a rejected call returns an error result that lists every problem."))
        async with bounded_stdio(settings.max_body_bytes) as (read, write):
            await server.run(read, write, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the stdio server; 2 on a bad configuration."""
    args = build_parser().parse_args(argv)
    try:
        settings = Settings(**{"log_level": "warning", **given_settings(args), "workers": 1})
    except ValidationError as exc:
        print(f"gecko-mcp: invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    os.umask(settings.file_mask())  # before anything creates a file (session DB, caches)
    logging.basicConfig(level=settings.log_level.upper() if settings.log_level != "trace" else "DEBUG",
                        stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve(settings, args.toolkit, args.session, args.mode))
    except (ToolNotFound, LookupError) as exc:
        hint = f"; did you mean: {', '.join(exc.suggestions)}" if isinstance(exc, ToolNotFound) and exc.suggestions else ""
        print(f"gecko-mcp: {exc}{hint}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0
