"""Run the local model server as a child process (tests, CI smoke, perf): `local_model_server(...)`."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from utils.local_model.cli import READY
from utils.procs import stop


@dataclass(frozen=True)
class RunningModel:
    """A started server."""

    base_url: str
    """`http://127.0.0.1:PORT/v1`."""
    name: str
    """The model name for Gecko and the runners (`openai-compatible:<alias>@<base_url>`)."""
    pid: int


@contextmanager
def local_model_server(args: Sequence[str] = (), *, log_path: Path | None = None,
                       timeout: float = 120.0) -> Iterator[RunningModel]:
    """`python -m utils.local_model serve --port 0 ARGS…` until the block ends; yields where it listens.

    Raises:
        RuntimeError: it exited or said nothing within `timeout` (its log says why).
    """
    log = open(log_path, "wb") if log_path else None  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "utils.local_model", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=log if log is not None else subprocess.DEVNULL,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line.startswith(READY.encode()) or not line:
                break
        if not line.startswith(READY.encode()):
            raise RuntimeError(f"the local model server did not start (exit code {proc.poll()}); "
                               f"see {log_path or 'its stderr'}")
        _, base_url, name = line.decode().split()
        yield RunningModel(base_url, name, proc.pid)
    finally:
        stop(proc)
        if log is not None:
            log.close()
