"""Real REST backends nobody on the project wrote, started on loopback for a replay: json-server and temba.

Each backend is a `Backend`: how to start it on a free 127.0.0.1 port for a document's resources, and whether it
validates request bodies (json-server stores whatever it is sent; temba checks each body against the JSON Schema
of the document's create/replace/update operation). Between sequences a backend is emptied through its own API
(list every collection, delete each record), so nothing but the API the document describes is used. Both come
pinned from the npm registry into `.npm-tools/` (`make npm-tools`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from benchmarks.fidelity.rest_replay.contract import Resource
from utils.procs import free_port, stop

TEMBA_LAUNCHER = Path(__file__).resolve().parent / "temba_server.mjs"


class BackendUnavailable(RuntimeError):
    """The backend's program is not installed (run `make npm-tools`)."""


@dataclass(frozen=True)
class Backend:
    """A real REST server program."""

    name: str
    version: str
    validates: bool
    """Whether it refuses bodies its schema forbids (else invalid calls are replayed on Gecko only)."""
    create_gap: float = 0.0
    """Seconds to leave after a create: temba's new id is the clock in milliseconds, so two creates in the same
    millisecond get the same id (a bug of the server, not a behaviour to measure Gecko against)."""
    ignores_unheld_filters: bool = False
    """A filter on a field no record of the collection holds is dropped (json-server 0.17: "automatically delete
    query parameters that can't be found in the database"), so the list answers every record: server-specific,
    not in any document, so such lists are left out of the list comparisons."""


JSON_SERVER = Backend("json-server", "0.17.4", validates=False, ignores_unheld_filters=True)
TEMBA = Backend("temba", "0.51.1", validates=True, create_gap=0.002)
BACKENDS = {b.name: b for b in (JSON_SERVER, TEMBA)}


def _npm_bin(npm_dir: Path, name: str) -> Path:
    path = npm_dir / "node_modules" / ".bin" / name
    if not path.exists():
        raise BackendUnavailable(f"{path} is missing: run `make npm-tools` (needs npm)")
    return path


def _env(npm_dir: Path) -> dict[str, str]:
    """The pinned Node first on PATH (the programs' `#!/usr/bin/env node` finds it)."""
    return {**os.environ, "PATH": f"{npm_dir / 'node_modules' / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}"}


def _command(backend: Backend, resources: list[Resource], npm_dir: Path, work: Path, port: int) -> list[str]:
    if backend is JSON_SERVER:
        db = work / "db.json"
        db.write_text(json.dumps({r.name: [] for r in resources}))
        return [str(_npm_bin(npm_dir, "json-server")), "--host", "127.0.0.1", "--port", str(port), "--quiet",
                str(db)]
    module = npm_dir / "node_modules" / "temba" / "dist" / "src" / "index.js"
    if not module.exists():
        raise BackendUnavailable(f"{module} is missing: run `make npm-tools` (needs npm)")
    schemas = {r.name: {kind: dict(op.body) for kind, op in (("post", r.create), ("put", r.replace),
                                                             ("patch", r.update)) if op is not None and op.body}
               for r in resources}
    (work / "config.json").write_text(json.dumps({"port": port, "resources": [r.name for r in resources],
                                                  "schemas": schemas, "module": module.as_uri()}))
    return [str(_npm_bin(npm_dir, "node")), str(TEMBA_LAUNCHER), str(work / "config.json")]


def _wait(url: str, probe: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"backend exited with code {proc.returncode} before answering")
        try:
            if httpx.get(f"{url}{probe}", timeout=2.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"backend at {url} did not answer in {timeout:.0f}s")


@contextmanager
def running(backend: Backend, resources: list[Resource], npm_dir: Path, timeout: float = 30.0) -> Iterator[str]:
    """Run `backend` on a free loopback port for `resources`; yield its base URL.

    Raises:
        BackendUnavailable: its program is not installed.
    """
    npm_dir = npm_dir.resolve()  # the backends run in a directory of their own
    if shutil.which("node", path=str(npm_dir / "node_modules" / ".bin")) is None:
        raise BackendUnavailable(f"no Node in {npm_dir}: run `make npm-tools` (needs npm)")
    with tempfile.TemporaryDirectory(prefix=f"rest-{backend.name}-") as tmp:
        port = free_port()
        cmd = _command(backend, resources, npm_dir, Path(tmp), port)
        log = (Path(tmp) / "server.log").open("wb")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp,
                                env=_env(npm_dir))
        url = f"http://127.0.0.1:{port}"
        try:
            _wait(url, resources[0].path, proc, timeout)
            yield url
        finally:
            stop(proc)
            log.close()


def empty(client: httpx.Client, resources: list[Resource]) -> None:
    """Delete every record of every collection through the API.

    Raises:
        RuntimeError: a collection is not empty afterwards.
    """
    for res in resources:
        if res.listing is None or res.delete is None:
            continue
        for _ in range(3):
            items = client.get(res.path).json()
            if not items:
                break
            for item in items:
                client.delete(res.item_path.replace(f"{{{res.id_param}}}", str(item[res.id_field])))
        else:
            raise RuntimeError(f"could not empty {res.path}")
