"""`run_gecko_server.py` / `gecko-server`: parse flags into Settings, validate toolkits, check the session store,
start uvicorn.

Everything that can stop a start is checked here, in the parent process, before the port is bound: a bad setting
(exit 2), toolkits or engines that do not load (exit 2), an unknown `--store` (exit 2), a store that does not
answer (exit 1). Each is one line on stderr; a worker never crash-loops on what the parent could have seen.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from collections.abc import Sequence

from pydantic import ValidationError

from gecko.forking import can_fork
from gecko.pipeline.engines import build_engines
from gecko.pipeline.synthesize.check import Unanswerable, unanswerable_tools
from gecko.sessions.store import open_store
from gecko.telemetry import configure_logging
from gecko.toolkits.loader import known_documents, load_toolkits
from gecko.toolkits.registry import ToolkitRegistry
from gecko.workers import check_address, serve
from utils.settings import Settings
from utils.settings_cli import add_settings_flags, given_settings

log = logging.getLogger("gecko")


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The server's flags: one per `Settings` field (see `utils.settings_cli`), plus `--check`; `prog` is the name
    the help calls the command by (default: how this process was started, e.g. `gecko serve`)."""
    p = argparse.ArgumentParser(prog=prog or _prog(), description="Run the Gecko tool simulation server.")
    p.add_argument("--check", action="store_true",
                   help="load and validate the toolkits and the role engines, print a summary and exit (no server)")
    add_settings_flags(p)
    return p


def _prog() -> str:
    """`gecko serve` under the `gecko` command, `gecko-server`, `python -m gecko` or `run_gecko_server.py`."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if name == "gecko":
        return "gecko serve"
    if name == "__main__.py":
        return "python -m gecko"
    return name or "gecko serve"


EXIT_CONFIG = 2
"""Bad settings, toolkits or engines, or an unknown store."""
EXIT_STORE = 1
"""The session store does not answer (Redis down, SQLite file not writable)."""
STORE_CHECK_TIMEOUT_S = 10.0


def _one_line(exc: ValidationError) -> str:
    return "; ".join(": ".join(filter(None, (".".join(str(part) for part in error["loc"]), error["msg"])))
                     for error in exc.errors())


async def _check_store(settings: Settings) -> None:
    """Open the session store once and close it (the workers open their own).

    Raises:
        ValueError: An unknown store.
        Exception: The store does not answer (whatever its client raised).
    """
    store = open_store(settings.store, sqlite_path=settings.sqlite_path(), ttl=settings.session_ttl, pool_size=1)
    try:
        await asyncio.wait_for(store.open(), STORE_CHECK_TIMEOUT_S)
    finally:
        await store.close()


def _progress(message: str) -> None:
    """A start-up progress line on stderr (a long load is never silent)."""
    print(f"gecko: {message}", file=sys.stderr, flush=True)


def _load(settings: Settings, answers: bool = False) -> tuple[int, int, list[Unanswerable]]:
    """Load and compile every toolkit and build the role engines, as a worker will; (toolkits, tools, and with
    `answers` the tools whose response cannot be synthesized). When every document loaded before under this Gecko
    (the toolkit cache), only the engines are built: the serving workers compile the toolkits anyway."""
    if not answers:
        known = known_documents(settings.schemas_dirs, cache_dir=settings.toolkit_cache_dir,
                                strict_validation=settings.strict_validation, strict=settings.strict_documents,
                                max_nodes=settings.max_toolkit_nodes)
        if known is not None:
            for fault in known[2]:
                log.warning("%s", fault)
            _progress(f"{known[0]} toolkit(s) known from the toolkit cache: the workers load them")
            build_engines(settings)
            return known[0], known[1], []
    registry = load_toolkits(settings.schemas_dirs, skip_invalid=settings.skip_invalid,
                             cache_dir=settings.toolkit_cache_dir, strict_validation=settings.strict_validation,
                             strict=settings.strict_documents, progress=_progress,
                             max_nodes=settings.max_toolkit_nodes)
    build_engines(settings, registry)
    return len(registry.toolkits), registry.tool_count, unanswerable_tools(registry, _progress) if answers else []


def _load_to_serve(settings: Settings) -> ToolkitRegistry:
    """Load every toolkit and build the role engines once, here: the serving workers are forked from this process
    and share the loaded toolkits (`gecko.forking`)."""
    registry = load_toolkits(settings.schemas_dirs, skip_invalid=settings.skip_invalid,
                             cache_dir=settings.toolkit_cache_dir, strict_validation=settings.strict_validation,
                             strict=settings.strict_documents, progress=_progress,
                             max_nodes=settings.max_toolkit_nodes)
    build_engines(settings, registry)
    return registry


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run the server (or `--check` the configuration); returns the exit code (0 ok, 1 the session store does not
    answer, 2 bad configuration)."""
    args = build_parser(prog).parse_args(argv)
    try:
        settings = Settings(**given_settings(args))  # flags over GECKO_* env over .env over defaults
    except ValidationError as exc:
        print(f"gecko: invalid configuration: {_one_line(exc)}", file=sys.stderr)
        return EXIT_CONFIG
    os.umask(settings.file_mask())  # before anything creates a file (session DB, caches)
    configure_logging("info" if settings.log_level == "trace" else settings.log_level, settings.log_format)
    if not args.check:
        try:
            check_address(settings.host, settings.port)
        except OSError as exc:  # before loading: a busy port fails in a second, and nothing says Gecko is on it
            print(f"gecko: cannot start: http://{settings.host}:{settings.port} cannot be bound "
                  f"({exc.strerror or exc}); stop what listens there or pick another --port", file=sys.stderr)
            return EXIT_CONFIG
    started = time.perf_counter()
    registry: ToolkitRegistry | None = None
    try:
        if args.check or not can_fork():  # a spawned worker loads its own toolkits: only check them here
            toolkits, tools, unanswerable = _load(settings, answers=args.check)
        else:
            registry = _load_to_serve(settings)
            toolkits, tools, unanswerable = len(registry.toolkits), registry.tool_count, []
    except Exception as exc:  # noqa: BLE001 - every start-up problem becomes one readable line, exit 2
        print(f"gecko: cannot start: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    log.info("loaded %d toolkits (%d tools) in %.2fs", toolkits, tools, time.perf_counter() - started)
    if args.check:
        for tool in unanswerable:
            print(f"gecko: {tool.tool} cannot answer: {tool.problem}", file=sys.stderr)
        if unanswerable:
            print(f"gecko: check failed: {len(unanswerable)} of {tools} tools can never answer (no response valid for "
                  "their schema can be synthesized); fix their response schemas", file=sys.stderr)
            return EXIT_CONFIG
        print(f"ok: {toolkits} toolkits, {tools} tools, every response synthesized, "
              f"{time.perf_counter() - started:.2f}s")
        return 0
    try:
        asyncio.run(_check_store(settings))
    except ValueError as exc:
        print(f"gecko: cannot start: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except Exception as exc:  # noqa: BLE001 - whatever the store's client raised, as one line
        detail = str(exc) or type(exc).__name__
        print(f"gecko: cannot start: the session store {settings.store!r} does not answer: {detail}", file=sys.stderr)
        return EXIT_STORE
    log.info("Gecko on http://%s:%d with %d worker(s); engines: %s", settings.host, settings.port,
             settings.workers, settings.role_models())
    if settings.store.startswith("sqlite"):
        log.info("sessions in %s (--state-dir: one per working directory by default; delete it to start afresh)",
                 settings.sqlite_path())
    serve(settings, registry)
    return 0
