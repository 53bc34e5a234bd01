"""Start and stop local servers as child processes (Gecko, the LLM stub) for demos, tests and benches."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
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

    `prefix` runs the server through another command, e.g. `ip netns exec NAME` (see `utils.netns`);
    `api_key` is given to the server in `GECKO_API_KEY` (never on its command line).
    """
    port = free_port()
    cmd = [*(prefix or []), sys.executable, "-m", "gecko", "--port", str(port),
           "--host", host, "--workers", str(workers), "--state-dir", str(state_dir), "--log-level", "warning"]
    for directory in schemas_dirs:
        cmd += ["--schemas-dir", str(directory)]
    cmd += extra or []
    log = open(log_path, "wb") if log_path else None  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=log if log is not None else subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True,
                            env={**os.environ, **(env or {}), **({"GECKO_API_KEY": api_key} if api_key else {})},
                            cwd=child_cwd())
    url = f"http://{host}:{port}"
    try:
        wait_healthy(url, timeout=timeout, expect_workers=workers, proc=proc, api_key=api_key)
        yield url
    finally:
        stop(proc)
        if log is not None:
            log.close()


@contextmanager
def redis_server(timeout: float = 10.0, bind: tuple[str, ...] = ()) -> Iterator[str]:
    """A throwaway `redis-server` (no persistence) on a free port of loopback (and `bind`); yield its loopback URL.

    Raises:
        FileNotFoundError: redis-server is not installed (Debian package `redis-server`).
    """
    binary = shutil.which("redis-server")
    if binary is None:
        raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", *bind, "--save", "",
                             "--appendonly", "no", "--protected-mode", "no" if bind else "yes"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    break
        except OSError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise TimeoutError(f"redis-server did not answer on port {port}")
        time.sleep(0.05)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


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
