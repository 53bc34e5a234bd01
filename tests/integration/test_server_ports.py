"""No check-then-bind: Gecko binds port 0 itself and says which port it got; redis-server (which cannot be asked
for port 0) is started again on another port when its port was taken in between."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import utils.procs
from tests.conftest import TOOLKITS_DIR
from tests.infra import require
from utils.procs import child_cwd, printed_url, redis_server, stop, wait_healthy

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("workers", [1, 2])
def test_the_server_binds_port_0_and_prints_the_port_it_got(tmp_path: Path, workers: int) -> None:
    output = tmp_path / "stdout.log"
    with open(output, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "gecko", "--port", "0", "--workers", str(workers),
                                 "--state-dir", str(tmp_path), "--schemas-dir", str(TOOLKITS_DIR), "--log-level",
                                 "warning"], stdout=log, stderr=subprocess.DEVNULL, start_new_session=True,
                                cwd=child_cwd())
    try:
        url = printed_url(output, proc, timeout=30)
        assert url.startswith("http://127.0.0.1:") and int(url.rsplit(":", 1)[1]) > 0
        health = wait_healthy(url, timeout=90, expect_workers=workers, proc=proc)
        assert health["workers"]["live"] == workers
    finally:
        stop(proc)


def test_redis_moves_to_another_port_when_its_port_was_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    require(shutil.which("redis-server"), "redis-server is not installed (CI installs the Debian package redis-server)")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        offered = iter([busy])
        real_free_port = utils.procs.free_port
        monkeypatch.setattr(utils.procs, "free_port", lambda: next(offered, None) or real_free_port())
        with redis_server() as url:
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            assert port != busy
            with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
                conn.sendall(b"PING\r\n")
                assert conn.recv(16).startswith(b"+PONG")
