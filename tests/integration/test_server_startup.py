"""The server refuses what it cannot serve before it binds its port: an unknown store, a store that does not
answer, impossible settings. One line on stderr, a non-zero exit, the port free afterwards (no worker crash-loop)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from utils.paths import REPO_ROOT
from utils.procs import free_port

TOOLKITS = REPO_ROOT / "tests" / "data"


@pytest.mark.parametrize(("flags", "code", "message"), [
    (["--store", "postgres://db/gecko"], 2, "unknown store 'postgres://db/gecko'"),
    (["--store", "redis://127.0.0.1:{closed}/0"], 1, "does not answer"),
    (["--workers", "0"], 2, "workers: Input should be greater than or equal to 1"),
    (["--store", "memory", "--workers", "2"], 2, "store 'memory' keeps sessions inside one process"),
])
def test_refused_at_start_with_one_line_and_the_port_free(tmp_path: Path, flags: list[str], code: int,
                                                          message: str) -> None:
    port = free_port()
    flags = [flag.format(closed=free_port()) for flag in flags]
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "run_gecko_server.py"), "--schemas-dir", str(TOOLKITS),
                           "--port", str(port), "--state-dir", str(tmp_path), *flags],
                          capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert proc.returncode == code, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    # one line says why, the last of Gecko's (start-up progress lines may come before it: a long load is never silent)
    said = [line for line in proc.stderr.splitlines() if line.startswith("gecko:")]
    assert message in said[-1] and sum(message in line for line in proc.stderr.splitlines()) == 1, proc.stderr
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # nothing holds the port


def test_a_busy_port_is_refused_before_anything_says_gecko_is_on_it(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, str(REPO_ROOT / "run_gecko_server.py"), "--schemas-dir", str(TOOLKITS),
                               "--port", str(port), "--state-dir", str(tmp_path)],
                              capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert proc.returncode == 2, proc.stderr
    assert "Gecko on http" not in proc.stderr and "Traceback" not in proc.stderr
    assert f"gecko: cannot start: http://127.0.0.1:{port} cannot be bound (Address already in use)" in proc.stderr
