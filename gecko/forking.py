"""Serving workers forked from a master that has loaded the toolkits once.

uvicorn starts its workers with multiprocessing's *spawn*: each one imported Gecko again and loaded every toolkit
again, in parallel with the others on the same cores (with 3,641 documents, most of a warm start). On Linux
(`can_fork`), the master loads the toolkits (the start-up check it runs anyway), imports the app, and its workers are
forked from it: they share its loaded toolkits copy-on-write and only build their own app, engines and session store
connection. Python's collector is frozen first (`gc.freeze`), so collections in a worker do not copy the shared pages.

A worker uvicorn restarts (one that died, or every one on SIGHUP) is forked from the master again, with the
toolkits the master loaded at start-up: restart the server to load changed documents.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import multiprocessing
import sys
from collections.abc import Iterator

from prometheus_client import values

APP_MODULE = "gecko.app"
"""Imported by the master before it forks, so no worker imports it again."""


def can_fork() -> bool:
    """True on Linux. Windows cannot fork; macOS can, but a process forked after a system framework started (a proxy
    lookup by an HTTP client, say) may crash, which is why Python spawns there by default: workers are spawned there."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


@contextlib.contextmanager
def forked_workers() -> Iterator[None]:
    """While inside, the workers uvicorn starts are forked from this process instead of spawned.

    uvicorn has no option for it: its `uvicorn._subprocess` makes every worker with a module-level spawn context,
    replaced here by a fork context (and put back on leaving).
    """
    import uvicorn._subprocess as uvicorn_subprocess

    importlib.import_module(APP_MODULE)
    gc.freeze()  # no collection first: it walks every loaded object (a second with 3,600 toolkits) to free little
    saved = uvicorn_subprocess.spawn
    setattr(uvicorn_subprocess, "spawn", multiprocessing.get_context("fork"))  # noqa: B010 - a fork context, not spawn's type
    try:
        yield
    finally:
        setattr(uvicorn_subprocess, "spawn", saved)  # noqa: B010


def metrics_mode_of_this_process() -> None:
    """Make the metrics made from now on follow this process's environment (call in a worker, before any metric).

    prometheus_client chooses at import between one process's values and files shared by all workers
    (`PROMETHEUS_MULTIPROC_DIR`); a forked worker inherits the choice the master made when it imported it, before
    the master set the variable.
    """
    values.ValueClass = values.get_value_class()
