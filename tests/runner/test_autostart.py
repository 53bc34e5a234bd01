"""`--gecko-url auto` (issue 33 item 8): the run's own Gecko starts with its progress on stderr, and a Gecko that
does not start fails the run in one line naming the cause and the way out (no traceback)."""

from __future__ import annotations

import contextlib
import io
import threading
import time

import pytest

from benchmarks.runner.autostart import relay_progress, start_gecko
from benchmarks.runner.errors import PreflightError
from tests.conftest import INVALID_DIR, TOOLKITS_DIR


def test_progress_lines_are_relayed_with_a_heartbeat(tmp_path, monkeypatch):
    monkeypatch.setattr("benchmarks.runner.autostart.HEARTBEAT_S", 0.6)
    log = tmp_path / "server.log"
    log.write_text("INFO something else\n")
    out = io.StringIO()

    def write_later() -> None:
        time.sleep(0.2)
        with log.open("a") as handle:
            handle.write("gecko: loading 3235 document(s) from 1 directory\ngecko: validated 12")  # half a line
            handle.flush()
            time.sleep(0.7)
            handle.write("00 of 3235 document(s)\n")

    writer = threading.Thread(target=write_later)
    with relay_progress(log, out):
        writer.start()
        writer.join()
        time.sleep(1.5)
    lines = out.getvalue().splitlines()
    assert "starting Gecko: loading 3235 document(s) from 1 directory" in lines
    assert "starting Gecko: validated 1200 of 3235 document(s)" in lines
    assert any(line.startswith("starting Gecko: still waiting") for line in lines)
    assert not any("something else" in line for line in lines)


@pytest.mark.integration
def test_a_gecko_that_cannot_start_fails_in_one_line(tmp_path, capsys):
    with contextlib.ExitStack() as stack, pytest.raises(PreflightError) as info:
        start_gecko(stack, [INVALID_DIR], workers=1, state_dir=tmp_path, server_args=[], timeout=120)
    message = str(info.value)
    assert "\n" not in message and "broken.json" in message and "--gecko-url" in message
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.integration
def test_a_slow_start_fails_in_one_line_naming_what_to_do(tmp_path):
    with contextlib.ExitStack() as stack, pytest.raises(PreflightError) as info:
        start_gecko(stack, [TOOLKITS_DIR], workers=1, state_dir=tmp_path, server_args=[], timeout=0.3)
    message = str(info.value)
    assert "\n" not in message and "not healthy after" in message and "--gecko-url" in message
