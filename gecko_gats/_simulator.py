"""`Simulator`: Gecko in process, with no server and no network, for unit tests of agents and for RL loops.

It is the server's own application (`gecko.create_app`: the same toolkit loading, validation, synthesis, state and
fault stages, the same error bodies), started with its lifespan on a private loop thread and reached through httpx's
in-process ASGI transport by the same client code as a real server. A call therefore returns exactly the
`ToolResponse` the HTTP server would give; what is saved is the network, the process and the port.

```python
from gecko_gats import Simulator

with Simulator(toolkits=["petstore.yaml"]) as sim, sim.session() as session:  # or {"petstore": document}
    reply = session.call("petstore/createPet", {"name": "Rex"})
    assert reply.ok, reply.detail
```
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from gecko import create_app
from gecko_gats._client import SyncGeckoClient
from gecko_gats._loop import LoopThread
from utils.paths import EXAMPLE_TOOLKITS_DIR
from utils.settings import Settings

Toolkits = str | Path | Sequence[str | Path] | Mapping[str, "str | Path | Mapping[str, Any]"]
"""Directories of OpenAPI documents and documents' files (JSON or YAML; a file's stem names its toolkit), or
`{toolkit name: document or file}`."""
STARTUP_TIMEOUT_S = 120.0
"""How long the application may take to start (open its store, probe LLM endpoints) or to stop."""
BASE_URL = "http://127.0.0.1"
"""The address requests carry in process (loopback: what a Gecko answers without `--allowed-hosts`)."""


class Simulator(SyncGeckoClient):
    """Gecko's pipeline in this process: `session()`, then `session.call(tool, arguments)`.

    Args:
        toolkits: directories and files, or `{name: document or file}` (default: the bundled example toolkits).
        settings: the server's settings (models of each role, faults, limits …); the simulator always uses the
            in-memory session store and one worker, and its own temporary state directory unless one is given.
        **overrides: settings fields, e.g. `state_model="none"` or `faults="flaky-network"`.
    """

    def __init__(self, toolkits: Toolkits | None = None, *, settings: Settings | None = None,
                 **overrides: Any) -> None:
        self._tmp = Path(tempfile.mkdtemp(prefix="gecko-sim-"))
        try:
            dirs = _toolkit_dirs(toolkits, self._tmp / "toolkits")
            base = settings.model_dump() if settings is not None else {}
            values = {**base, "state_dir": self._tmp / "state", "search_cache_dir": self._tmp / "search",
                      **overrides, "schemas_dirs": dirs, "store": "memory", "workers": 1}
            self.settings = Settings(**values)
            self.app = create_app(self.settings)
            loop = LoopThread("gecko-simulator")
            self._stop = asyncio.Event()
            started: concurrent.futures.Future[None] = concurrent.futures.Future()
            # one task enters and leaves the lifespan (its task groups must be left by the task that entered them)
            self._lifespan = asyncio.run_coroutine_threadsafe(self._serve(started), loop.loop)
            started.result(timeout=STARTUP_TIMEOUT_S)
        except BaseException:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        super().__init__(BASE_URL, transport=httpx.ASGITransport(app=self.app), _loop=loop)

    async def _serve(self, started: concurrent.futures.Future[None]) -> None:
        try:
            async with self.app.router.lifespan_context(self.app):
                started.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not started.done():
                started.set_exception(exc)
            raise

    def close(self) -> None:
        """Stop the application (drains deferred state updates) and remove the temporary files (idempotent)."""
        if not self._loop.loop.is_closed():
            self._loop.run(self.aio.aclose())
            self._loop.loop.call_soon_threadsafe(self._stop.set)
            self._lifespan.result(timeout=STARTUP_TIMEOUT_S)
            self._loop.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> Simulator:
        return self


def _toolkit_dirs(toolkits: Toolkits | None, scratch: Path) -> list[Path]:
    """Directories the server loads `toolkits` from: directories as given, then `scratch` with the files and
    documents copied into it (named for their toolkit).

    Raises:
        FileNotFoundError: A path that does not exist.
        ValueError: Two files of the same toolkit name.
        TypeError: Something that is neither a path nor a document.
    """
    if toolkits is None:
        return [EXAMPLE_TOOLKITS_DIR]
    named: list[tuple[str | None, str | Path | Mapping[str, Any]]]
    if isinstance(toolkits, (str, Path)):
        named = [(None, toolkits)]
    elif isinstance(toolkits, Mapping):
        named = list(toolkits.items())
    else:
        named = [(None, item) for item in toolkits]
    dirs: list[Path] = []
    scratch.mkdir(parents=True, exist_ok=True)
    for name, item in named:
        if isinstance(item, Mapping):
            if name is None:
                raise TypeError("a document needs its toolkit's name: pass toolkits={'name': document, …}")
            target = scratch / f"{name}.json"
            target.write_text(json.dumps(item))
            continue
        if not isinstance(item, (str, Path)):
            raise TypeError(f"a toolkit is a directory, a file or an OpenAPI document, not {type(item).__name__}")
        path = Path(item).expanduser()
        if path.is_dir() and name is None:
            dirs.append(path)
        elif path.is_file():
            suffix = path.suffix if path.suffix in (".json", ".yaml", ".yml") else ".yaml"
            target = scratch / f"{name or path.stem}{suffix}"
            if any(scratch.glob(f"{name or path.stem}.*")):
                raise ValueError(f"two toolkits are named {name or path.stem!r}")
            shutil.copyfile(path, target)
        else:
            raise FileNotFoundError(f"toolkit {str(item)!r}: no such file" + ("" if name is None else " (a named "
                                    "toolkit is one file or document)"))
    return [*dirs, scratch] if any(scratch.iterdir()) else dirs
