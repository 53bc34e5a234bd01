"""`run_gecko_server.py` / `gecko-server`: parse flags into Settings, validate toolkits, start uvicorn."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence

from pydantic import ValidationError

from gecko.pipeline.engines import build_engines
from gecko.toolkits.loader import load_toolkits
from gecko.workers import serve
from utils.settings import Settings
from utils.settings_cli import add_settings_flags, given_settings

log = logging.getLogger("gecko")


def build_parser() -> argparse.ArgumentParser:
    """The server's flags: one per `Settings` field (see `utils.settings_cli`), plus `--check`."""
    p = argparse.ArgumentParser(prog="run_gecko_server.py", description="Run the Gecko tool simulation server.")
    p.add_argument("--check", action="store_true",
                   help="load and validate the toolkits and the role engines, print a summary and exit (no server)")
    add_settings_flags(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server (or `--check` the configuration); returns the exit code (0 ok, 2 bad configuration)."""
    args = build_parser().parse_args(argv)
    try:
        settings = Settings(**given_settings(args))  # flags over GECKO_* env over .env over defaults
    except ValidationError as exc:
        print(f"gecko: invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    os.umask(settings.file_mask())  # before anything creates a file (session DB, caches)
    logging.basicConfig(level=logging.INFO if settings.log_level == "trace" else settings.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    started = time.perf_counter()
    try:
        registry = load_toolkits(settings.schemas_dirs, skip_invalid=settings.skip_invalid,
                                 cache_dir=settings.state_dir, strict_validation=settings.strict_validation)
        build_engines(settings, registry)
    except Exception as exc:  # noqa: BLE001 - every start-up problem becomes one readable line, exit 2
        print(f"gecko: cannot start: {exc}", file=sys.stderr)
        return 2
    log.info("loaded %d toolkits (%d tools) in %.2fs", len(registry.toolkits), registry.tool_count,
             time.perf_counter() - started)
    if args.check:
        print(f"ok: {len(registry.toolkits)} toolkits, {registry.tool_count} tools, "
              f"{time.perf_counter() - started:.2f}s")
        return 0
    log.info("Gecko on http://%s:%d with %d worker(s); engines: %s", settings.host, settings.port,
             settings.workers, settings.role_models())
    serve(settings)
    return 0
