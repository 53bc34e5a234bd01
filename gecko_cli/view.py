"""`gecko view RUN_DIR`: the viewer (the server's `/ui` page and script, one viewer) on a run directory, finished
or still running: the tasks table, and one task's GATS attempts side by side with what changed between them, the
feedback in between, the real execution, the official verdict and the ground truth.

Read-only (GET only), on 127.0.0.1 by default, nothing fetched from outside. With an API key (`GECKO_API_KEY` or
`--api-key-file`, as the server) every request needs it: a browser signs in once at `/ui/login` (the same form
and read-only cookie as the server's viewer), a script sends `Authorization: Bearer <key>`.

```
GET /ui                   the page (its script shows the run: #/ tasks, #/t/<key> one task)
GET /run                  the run's facts and one row per task (JSON)
GET /run/tasks/{key}      one task: its turns of attempts, changes, feedback, real run, official verdict, ground truth
```
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse, RedirectResponse

from benchmarks.registry import load_details
from benchmarks.runner.run_view import RunView
from gecko.api.hosts import HostCheckMiddleware, accepted_hosts
from gecko.api.routes.ui import viewer_router
from gecko.api.security import ApiKeyMiddleware
from utils.settings import read_secret_file

DEFAULT_PORT = 8790
_NO_STORE = {"cache-control": "no-store"}


def create_view_app(view: RunView, api_key: str | None = None, bind: str = "127.0.0.1") -> FastAPI:
    """The read-only viewer app of one run directory (`api_key`: every request needs it), answering only the loopback
    names and the address `bind` in `Host` (DNS rebinding, as the server)."""
    app = FastAPI(title="Gecko run viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.include_router(viewer_router(lambda _request: api_key or "", mode="run", title=f"Gecko run: {view.path.name}"))

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/ui", status_code=307)

    @app.get("/run")
    def run() -> JSONResponse:
        return JSONResponse(view.overview(), headers=_NO_STORE)

    @app.get("/run/tasks/{key:path}")
    def task(key: str) -> JSONResponse:
        page = view.task(key)
        if page is None:
            return JSONResponse({"type": "urn:gecko:problem:not-found", "title": "Not Found", "status": 404,
                                 "detail": f"the run has no task {key!r}"}, status_code=404,
                                media_type="application/problem+json")
        return JSONResponse(page, headers=_NO_STORE)

    if api_key:
        app.add_middleware(ApiKeyMiddleware, api_key=api_key)
    app.add_middleware(HostCheckMiddleware, allowed=accepted_hosts(bind, ()))
    return app


def _api_key(key_file: Path | None) -> str | None:
    """The key from `--api-key-file` or `GECKO_API_KEY` (not both), or None.

    Raises:
        ValueError: both are given, or the file cannot be read or is empty.
    """
    from_env = os.environ.get("GECKO_API_KEY", "").strip()
    if key_file is not None:
        if from_env:
            raise ValueError("give the API key once: GECKO_API_KEY or --api-key-file, not both")
        return read_secret_file(key_file)
    return from_env or None


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port` (port 0: a free one), so the printed address is the real one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def view_command(argv: Sequence[str] | None = None) -> int:
    """`gecko view RUN_DIR [--host H] [--port P] [--api-key-file F]`; serves until Ctrl-C; returns the exit code."""
    parser = argparse.ArgumentParser(prog="gecko view", description=(
        "Serve the Gecko viewer on a run directory (finished or still running): tasks table, one task's GATS "
        "attempts side by side, official verdicts and ground truth. Read-only."))
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the directory the runner printed as 'run dir:'")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = a free one)")
    parser.add_argument("--api-key-file", type=Path, default=None,
                        help="file whose first line is the key every request must give (default: GECKO_API_KEY)")
    args = parser.parse_args(argv)
    try:
        key = _api_key(args.api_key_file)
        view = RunView(args.run_dir)
        view.details = load_details(str(view.overview()["benchmark"]))
        sock = _listen(args.host, args.port)
    except (ValueError, OSError, ImportError) as exc:
        print(f"gecko view: {exc}", file=sys.stderr)
        return 1
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"viewer: http://{shown}:{port}/ui  (run {args.run_dir}; Ctrl-C stops)", flush=True)
    if host not in ("127.0.0.1", "::1", "localhost") and not key:
        print("gecko view: warning: listening beyond this machine without an API key; anyone who can reach it can "
              "read the run (set GECKO_API_KEY or --api-key-file)", file=sys.stderr)
    server = uvicorn.Server(uvicorn.Config(create_view_app(view, key, args.host), log_level="warning", access_log=False))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0
