"""`run_gecko_server.py` / `gecko-server`: parse flags into Settings, validate toolkits, start uvicorn."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence

from pydantic import ValidationError

from gecko.app import SETTINGS_ENV
from gecko.pipeline.engines import build_engines
from gecko.serving import HTTP_PROTOCOL
from gecko.toolkits.loader import load_toolkits
from utils.settings import Settings
from utils.settings_cli import add_settings_flags, given_settings

log = logging.getLogger("gecko")
WORKER_START_TIMEOUT_S = 60
"""How long uvicorn's supervisor waits for a worker to start or answer its health ping before restarting it
(uvicorn's default, 5 s, restarts every worker forever on a loaded machine, where importing the app takes longer)."""


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
    payload = settings.model_dump(mode="json")
    if settings.api_key is not None:
        payload["api_key"] = settings.api_key.get_secret_value()
    os.environ[SETTINGS_ENV] = json.dumps(payload)
    import uvicorn

    log.info("Gecko on http://%s:%d with %d worker(s); engines: %s", settings.host, settings.port,
             settings.workers, settings.role_models())
    uvicorn.run("gecko.app:create_app_from_env", factory=True, host=settings.host, port=settings.port,
                workers=settings.workers, log_level=settings.log_level, access_log=False, http=HTTP_PROTOCOL,
                timeout_worker_healthcheck=WORKER_START_TIMEOUT_S)
    return 0
