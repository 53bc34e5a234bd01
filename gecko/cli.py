"""`run_gecko_server.py` / `gecko-server`: parse flags into Settings, validate toolkits, start uvicorn."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

from pydantic import ValidationError

from gecko.app import SETTINGS_ENV
from gecko.pipeline.engines import build_engines
from gecko.serving import HTTP_PROTOCOL
from gecko.toolkits.loader import load_toolkits
from utils.settings import Settings

log = logging.getLogger("gecko")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run_gecko_server.py", description="Run the Gecko tool simulation server.")
    p.add_argument("--schemas-dir", "--schemas_dir", dest="schemas_dirs", action="append", type=Path,
                   help="directory of OpenAPI 3.0/3.1 documents, one toolkit per file; repeat for more "
                        "(earlier wins on name clashes). Default: the bundled example toolkits")
    p.add_argument("--skip-invalid", action="store_true", default=None,
                   help="log and skip invalid documents instead of refusing to start")
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8000)")
    p.add_argument("--workers", type=int, help="worker processes (default 2)")
    for role, text in (("response", "response synthesis"), ("state", "task-state updates ('none' disables)"),
                       ("validation", "semantic validation ('none'/'rules' = syntactic only)"),
                       ("judge", "checklist and judge")):
        p.add_argument(f"--{role}-model", f"--{role}_model", dest=f"{role}_model",
                       help=f"engine or model alias for {text}; default 'rules' (offline)")
    p.add_argument("--store", help="memory | sqlite | sqlite:PATH | redis://host:port/db (default sqlite)")
    p.add_argument("--session-ttl", type=float, help="seconds of inactivity before a session expires")
    p.add_argument("--api-key", help="require 'Authorization: Bearer KEY' on every request but /health")
    p.add_argument("--state-dir", type=Path, help="where the session DB and caches live")
    p.add_argument("--max-body-bytes", type=int, help="largest request body accepted (default 1 MiB)")
    p.add_argument("--log-level", help="critical | error | warning | info | debug | trace")
    p.add_argument("--no-cache", dest="llm_cache", action="store_false", default=None,
                   help="do not read or write the LLM reply cache")
    p.add_argument("--llm-timeout", dest="llm_timeout_s", type=float, help="seconds per LLM request (default 60)")
    p.add_argument("--llm-max-attempts", type=int, help="attempts per LLM request (default 4)")
    p.add_argument("--llm-http-backend", choices=["auto", "aiohttp", "httpx", "raw"],
                   help="HTTP stack under the LLM client (default auto)")
    p.add_argument("--strict-validation", action="store_true", default=None,
                   help="run openapi-spec-validator on every document, however large (slow on big specs)")
    p.add_argument("--check", action="store_true",
                   help="load and validate the toolkits, print a summary and exit (no server)")
    return p


def settings_from_args(argv: list[str] | None = None) -> Settings:
    """CLI flags over env (`GECKO_*`) over `.env` over defaults."""
    args = build_parser().parse_args(argv)
    given = {k: v for k, v in vars(args).items() if v is not None and k != "check"}
    return Settings(**given)


def main(argv: list[str] | None = None) -> int:
    check_only = "--check" in (sys.argv[1:] if argv is None else argv)
    try:
        settings = settings_from_args(argv)
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
    if check_only:
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
                workers=settings.workers, log_level=settings.log_level, access_log=False, http=HTTP_PROTOCOL)
    return 0
