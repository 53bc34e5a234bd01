"""Start and stop local servers as child processes (Gecko, the LLM stub) for demos, tests and benches."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from utils.paths import REPO_ROOT, is_checkout


def child_cwd() -> Path | None:
    """Working directory of a child started as `python -m <our package>`: a checkout's root (so that `-m` finds the
    packages even when they are not installed, and the checkout's `.env` is read as before); None for an install
    (the child inherits ours)."""
    return REPO_ROOT if is_checkout() else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, timeout: float = 60.0, expect_workers: int | None = None,
                 proc: subprocess.Popen | None = None, api_key: str | None = None) -> dict:
    """Poll `GET {url}/health` until it answers (and reports `expect_workers` live workers; a server with an API
    key reports them only to a caller with `api_key`)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode} before becoming healthy")
        try:
            body = httpx.get(f"{url}/health", timeout=2.0, headers=headers).json()
            if expect_workers is None or body.get("workers", {}).get("live", 0) >= expect_workers:
                return body
            last = f"{body.get('workers')}"
        except (httpx.HTTPError, ValueError) as exc:
            last = str(exc)
        time.sleep(0.1)
    raise TimeoutError(f"{url} not healthy after {timeout:.0f}s: {last}")


def stop(proc: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGINT the process group, then SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=timeout)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


@contextmanager
def run_viewer(run_dir: Path, *, api_key: str | None = None, timeout: float = 60.0) -> Iterator[str]:
    """Run `gecko view RUN_DIR` on a free port of 127.0.0.1; yield its base URL (`api_key` goes in
    `GECKO_API_KEY`, never on the command line)."""
    env = {k: v for k, v in os.environ.items() if k != "GECKO_API_KEY"} | ({"GECKO_API_KEY": api_key} if api_key else {})
    proc = subprocess.Popen([sys.executable, "-m", "gecko_cli", "view", str(run_dir), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env=env, cwd=child_cwd())
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        line = ""
        while time.monotonic() < deadline and not line.startswith("viewer: "):
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError(f"gecko view exited with {proc.returncode}")
        if not line.startswith("viewer: "):
            raise TimeoutError(f"gecko view printed no address in {timeout:.0f}s")
        yield line.split()[1].removesuffix("/ui")
    finally:
        stop(proc)
        if proc.stdout is not None:
            proc.stdout.close()


@contextmanager
def gecko_server(
    schemas_dirs: list[Path], *, workers: int = 2, state_dir: Path, extra: list[str] | None = None,
    env: dict[str, str] | None = None, log_path: Path | None = None, timeout: float = 90.0,
    host: str = "127.0.0.1", prefix: list[str] | None = None, api_key: str | None = None,
) -> Iterator[str]:
    """Run the Gecko server (`python -m gecko`) on a free port of `host` (loopback by default); yield its base URL.

    The server binds port 0 itself and prints the port it got (`GECKO_LISTENING`): no other process can take the
    port between choosing and binding it. `prefix` runs the server through another command, e.g.
    `ip netns exec NAME` (see `utils.netns`); `api_key` is given to the server in `GECKO_API_KEY` (never on its
    command line).
    """
    cmd = [*(prefix or []), sys.executable, "-m", "gecko", "--port", "0",
           "--host", host, "--workers", str(workers), "--state-dir", str(state_dir), "--log-level", "warning",
           "--exit-with-parent"]
    for directory in schemas_dirs:
        cmd += ["--schemas-dir", str(directory)]
    cmd += extra or []
    output = log_path or Path(tempfile.mkstemp(prefix="gecko-server-", suffix=".log")[1])
    log = open(output, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, **(env or {}), **({"GECKO_API_KEY": api_key} if api_key else {})},
                            cwd=child_cwd())
    try:
        started = time.monotonic()
        url = printed_url(output, proc, timeout)
        wait_healthy(url, timeout=max(1.0, timeout - (time.monotonic() - started)), expect_workers=workers, proc=proc,
                     api_key=api_key)
        yield url
    finally:
        stop(proc)
        log.close()
        if log_path is None:
            output.unlink(missing_ok=True)


GECKO_LISTENING = "gecko: listening on "
"""How the server's line on stdout that gives its bound address starts (`gecko.workers.serve` prints it)."""


def printed_url(output: Path, proc: subprocess.Popen, timeout: float) -> str:
    """The base URL a starting Gecko prints on its stdout (redirected to `output`) once it has bound its port.

    Raises:
        RuntimeError: The server exited first (the end of its output says why).
        TimeoutError: No such line within `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        text = output.read_text(errors="replace")
        url = next((line[len(GECKO_LISTENING):].strip() for line in text.splitlines()
                    if line.startswith(GECKO_LISTENING)), None)
        if url:
            return url
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode} before listening: {text[-2000:]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server printed no address in {timeout:.0f}s: {text[-2000:]}")
        time.sleep(0.05)


REDIS_PORT_ATTEMPTS = 5
"""redis-server cannot bind port 0 and report it: a port taken between choosing and binding it is tried again."""


@contextmanager
def redis_server(timeout: float = 10.0, bind: tuple[str, ...] = ()) -> Iterator[str]:
    """A throwaway `redis-server` (no persistence) on a free port of loopback (and `bind`); yield its loopback URL.

    redis-server cannot be asked for port 0, so a free port is chosen first; when another process binds it before
    this server does, the server exits and another port is tried. It is ready when the server answering on the port
    reports this process's id (`INFO server`), never another Redis that took the port.

    Raises:
        FileNotFoundError: redis-server is not installed (Debian package `redis-server`).
        TimeoutError: The server did not answer within `timeout`, or every port tried was taken.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
    for _ in range(REDIS_PORT_ATTEMPTS):
        port = free_port()
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", *bind, "--save", "",
                                 "--appendonly", "no", "--protected-mode", "no" if bind else "yes"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while _redis_pid(port) != proc.pid:
            if proc.poll() is not None:
                break  # could not bind the port (taken in between): try another
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait(timeout=10)
                raise TimeoutError(f"redis-server did not answer on port {port}")
            time.sleep(0.05)
        else:
            try:
                yield f"redis://127.0.0.1:{port}/0"
            finally:
                proc.terminate()
                proc.wait(timeout=10)
            return
    raise TimeoutError(f"redis-server could not bind a port in {REDIS_PORT_ATTEMPTS} attempts")


def _redis_pid(port: int) -> int | None:
    """The process id the Redis server on loopback `port` reports (None: none answers, or not as Redis does)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock, sock.makefile("rb") as reply:
            sock.sendall(b"INFO server\r\n")
            header = reply.readline()
            if not header.startswith(b"$"):
                return None
            body = reply.read(int(header[1:]) + 2).decode(errors="replace")
    except (OSError, ValueError):
        return None
    return next((int(line.split(":", 1)[1]) for line in body.splitlines() if line.startswith("process_id:")), None)


def rss_kb(pid: int) -> int:
    """The resident set size of process `pid`, in KiB (Linux: `/proc/<pid>/status`; 0 if it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)


def gecko_rss_kb(url: str, workers: int = 2, tries: int = 50) -> int:
    """The summed RSS (KiB) of a Gecko's worker processes, found by asking `/health` for its `pid` until
    `workers` distinct ones answered (or `tries` requests, each on a new connection)."""
    pids: set[int] = set()
    for _ in range(tries):
        pids.add(int(httpx.get(f"{url}/health").json()["pid"]))
        if len(pids) >= workers:
            break
    return sum(rss_kb(pid) for pid in pids)
