"""Issue 13, rows 4–6, on a real server (uvicorn, 2 workers, 127.0.0.1): slow clients, a killed master,
secrets out of sight, private files."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from utils.paths import REPO_ROOT
from utils.procs import free_port, gecko_server, stop, wait_healthy

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]
TOOLKITS = REPO_ROOT / "tests" / "data" / "openapi"
KEY = "k3y-that-must-stay-private"


def server_command(port: int, state_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, str(REPO_ROOT / "run_gecko_server.py"), "--port", str(port), "--workers", "2",
            "--state-dir", str(state_dir), "--log-level", "warning", "--schemas-dir", str(TOOLKITS), *extra]


@contextmanager
def running(command: list[str], env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, **(env or {})}, cwd=REPO_ROOT)
    try:
        yield proc
    finally:
        stop(proc)


def children(pid: int) -> list[int]:
    """Pids whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def proc_text(pid: int, name: str) -> str:
    return Path(f"/proc/{pid}/{name}").read_bytes().replace(b"\0", b" ").decode(errors="replace")


# -- row 4: slow clients ---------------------------------------------------------------------------------------


def test_slow_clients_get_408_and_do_not_hold_the_server(tmp_path: Path) -> None:
    with gecko_server([TOOLKITS], workers=2, state_dir=tmp_path, extra=["--request-read-timeout", "1.5"]) as url:
        port = int(url.rsplit(":", 1)[1])
        held = []
        for _ in range(200):  # Content-Length larger than the body: the server waits for the rest
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{\"state\":")
            held.append(sock)
        started = time.monotonic()
        assert httpx.get(f"{url}/health", timeout=5).status_code == 200  # still served meanwhile
        assert time.monotonic() - started < 5.0  # not held behind the slow clients
        for sock in held:
            sock.settimeout(10)
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
            assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["status"] == 408
            sock.close()
        assert time.monotonic() - started < 20.0  # all 200 released by the 1.5 s deadline, not held (was: forever)

        # a slow client that finishes within the deadline is served
        sock = socket.create_connection(("127.0.0.1", port))
        body = b'{"state": {"a": 1}}'
        sock.sendall(b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        for byte in body:
            sock.sendall(bytes([byte]))
            time.sleep(0.02)
        sock.settimeout(10)
        assert sock.recv(64).startswith(b"HTTP/1.1 201 ")
        sock.close()


# -- row 5: a killed master takes its workers along ------------------------------------------------------------


def test_workers_exit_when_the_master_is_killed_and_a_restart_binds_again(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with running(server_command(port, tmp_path)) as master:
        wait_healthy(url, timeout=90, expect_workers=2, proc=master)
        workers = children(master.pid)
        assert len(workers) >= 2
        os.kill(master.pid, signal.SIGKILL)
        master.wait(timeout=10)
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in workers), "workers outlived their master"
    with running(server_command(port, tmp_path)) as again:
        assert wait_healthy(url, timeout=90, expect_workers=2, proc=again)["status"] == "ok"


LAUNCHER = """
import sys, time
from pathlib import Path
from utils.procs import gecko_server
with gecko_server([Path(sys.argv[1])], workers=2, state_dir=Path(sys.argv[2])) as url:
    print(url, flush=True)
    time.sleep(600)
"""


def test_a_server_started_by_a_launcher_exits_when_the_launcher_is_killed(tmp_path: Path) -> None:
    """`utils.procs.gecko_server` (what `--gecko-url auto` and the harnesses use) starts Gecko in its own session;
    a launcher killed from outside (SIGKILL: no cleanup runs) must not leave that server behind."""
    family: list[int] = []
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(TOOLKITS), str(tmp_path)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO_ROOT)
    try:
        assert launcher.stdout is not None
        url = launcher.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"the launcher printed no URL (exit {launcher.poll()})"
        server = children(launcher.pid)
        assert len(server) == 1 and len(children(server[0])) >= 2
        family += [server[0], *children(server[0])]
        os.kill(launcher.pid, signal.SIGKILL)
        launcher.wait(timeout=10)
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in family) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in family), "the server outlived the process that started it"
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait(timeout=10)
        for pid in family:  # what a failing run left behind
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


# -- row 6: secrets out of sight, private files ----------------------------------------------------------------


@pytest.mark.parametrize("source", ["variable", "file"])
def test_the_key_is_in_no_command_line_nor_worker_environment(tmp_path: Path, source: str) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    key_file.chmod(0o600)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    extra = ("--api-key-file", str(key_file)) if source == "file" else ()
    env = {"GECKO_API_KEY": KEY} if source == "variable" else {}
    with running(server_command(port, tmp_path / "state", *extra), env=env) as master:
        wait_healthy(url, timeout=90, expect_workers=2, proc=master, api_key=KEY)
        workers = children(master.pid)
        assert workers
        assert KEY not in proc_text(master.pid, "cmdline")
        for pid in workers:
            assert KEY not in proc_text(pid, "cmdline") and KEY not in proc_text(pid, "environ")
            assert "GECKO_API_KEY" not in proc_text(pid, "environ")

        anonymous = httpx.get(f"{url}/health", timeout=5)
        assert anonymous.status_code == 200 and set(anonymous.json()) == {"status", "version"}
        wrong = httpx.get(f"{url}/health", headers={"Authorization": "Bearer nope"}, timeout=5)
        assert set(wrong.json()) == {"status", "version"}
        full = httpx.get(f"{url}/health", headers={"Authorization": f"Bearer {KEY}"}, timeout=5).json()
        assert full["workers"]["live"] == 2 and "roles" in full and "pid" in full
        assert httpx.get(f"{url}/toolkits", timeout=5).status_code == 401
        assert httpx.get(f"{url}/toolkits", headers={"Authorization": f"Bearer {KEY}"}, timeout=5).status_code == 200


def test_a_key_on_the_command_line_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(server_command(free_port(), tmp_path, "--api-key", KEY), capture_output=True, text=True,
                          timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 2 and "--api-key-file" in done.stderr and "GECKO_API_KEY" in done.stderr


@pytest.mark.parametrize(("mask", "directory", "file"), [(None, 0o700, 0o600), ("022", 0o755, 0o644)])
def test_files_the_server_creates_are_private_unless_configured(tmp_path: Path, mask: str | None, directory: int,
                                                                 file: int) -> None:
    state = tmp_path / "state"
    extra = ["--umask", mask] if mask else []
    with gecko_server([TOOLKITS], workers=2, state_dir=state, extra=extra) as url:
        assert httpx.get(f"{url}/session-id", timeout=5).status_code == 200
        assert state.stat().st_mode & 0o777 == directory
        assert (state / "sessions.db").stat().st_mode & 0o777 == file
        for path in state.rglob("*"):  # none more open than the mask allows (a lock file may be stricter)
            expected = directory if path.is_dir() else file
            assert path.stat().st_mode & 0o777 & ~expected == 0, path
