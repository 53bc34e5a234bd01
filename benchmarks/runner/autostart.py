"""`--gecko-url auto`: start the run's own Gecko with progress on stderr, and fail in one line that says what to do.

A first start validates every toolkit document (a minute or more for thousands of them on a loaded machine; later
starts reuse the toolkit cache). While the server starts, its own progress lines (`gecko: …`, see `gecko.cli`) are
relayed to stderr, and a line every `HEARTBEAT_S` seconds says it is still waiting; a server that exits or does not
become healthy in time raises `PreflightError` with the server's last word and the way out.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from benchmarks.runner.errors import PreflightError
from utils.procs import gecko_server

START_TIMEOUT_S = 600.0
"""How long the run waits for its own Gecko to be healthy (a cold start of thousands of toolkits takes minutes)."""
HEARTBEAT_S = 10.0
POLL_S = 0.5
PREFIX = "gecko: "


@contextlib.contextmanager
def relay_progress(log_path: Path, out: TextIO | None = None) -> Iterator[None]:
    """While the block runs, copy the server's progress lines from `log_path` to `out` (stderr), with a heartbeat."""
    stream = out if out is not None else sys.stderr
    stop = threading.Event()
    started = time.monotonic()

    def run() -> None:
        offset, said = 0, time.monotonic()
        while not stop.wait(POLL_S):
            try:
                with open(log_path, "rb") as handle:
                    handle.seek(offset)
                    chunk = handle.read()
            except OSError:
                chunk = b""
            complete = chunk[: chunk.rfind(b"\n") + 1]
            offset += len(complete)
            for line in complete.decode(errors="replace").splitlines():
                if line.startswith(PREFIX):
                    print(f"starting Gecko: {line[len(PREFIX):]}", file=stream, flush=True)
                    said = time.monotonic()
            if time.monotonic() - said >= HEARTBEAT_S:
                print(f"starting Gecko: still waiting ({time.monotonic() - started:.0f}s)", file=stream, flush=True)
                said = time.monotonic()

    thread = threading.Thread(target=run, name="gecko-start-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def last_word(log_path: Path) -> str:
    """The server's explanation: its `gecko: cannot start` line, else its last non-empty line."""
    try:
        lines = [line.strip() for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no output"
    refusal = [line for line in lines if line.startswith(f"{PREFIX}cannot start") or "check failed" in line]
    return (refusal or lines or ["no output"])[-1][:500]


def start_gecko(stack: contextlib.ExitStack, schemas_dirs: list[Path], *, workers: int, state_dir: Path,
                server_args: list[str], timeout: float = START_TIMEOUT_S) -> str:
    """Start Gecko inside `stack` (stopped when it closes); its base URL once healthy.

    Raises:
        PreflightError: it exited or was not healthy within `timeout` (one line: why, and what to do).
    """
    log_path = state_dir / "server.log"
    print(f"starting Gecko on {', '.join(map(str, schemas_dirs))} ({workers} worker(s))…", file=sys.stderr,
          flush=True)
    try:
        with relay_progress(log_path):
            return stack.enter_context(gecko_server(schemas_dirs, workers=workers, state_dir=state_dir,
                                                    extra=server_args, log_path=log_path, timeout=timeout))
    except TimeoutError:
        raise PreflightError(
            f"--gecko-url auto: Gecko was not healthy after {timeout:.0f}s (last: {last_word(log_path)}); a first "
            "start validates every toolkit once, so try again (later starts reuse the toolkit cache), or start it "
            "yourself (`gecko serve --schemas-dir DIR`) and pass --gecko-url http://127.0.0.1:8000") from None
    except RuntimeError:
        raise PreflightError(f"--gecko-url auto: Gecko did not start: {last_word(log_path)}; fix that, or start it "
                             "yourself and pass its URL with --gecko-url") from None
