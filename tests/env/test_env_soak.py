"""The soak benchmark, light: episodes back to back over a real 2-worker Gecko leave no session, no client
objects and no runaway server memory behind (`perf/env_soak.py`; the full run is 10,000 episodes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from utils.paths import REPO_ROOT

# The soak run is one subprocess given up to 600 s on a loaded machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


def test_episodes_back_to_back_leave_nothing_behind() -> None:
    run = subprocess.run([sys.executable, str(REPO_ROOT / "perf" / "env_soak.py"), "--episodes", "600",
                          "--warmup", "200", "--batch", "200", "--concurrency", "32", "--calls", "1"],
                         capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    figures = json.loads(run.stdout)
    assert figures["episodes"] == 600 and figures["success"] == 600 and figures["untested"] == 0
    assert figures["sessions_left"] == 0
    objects = figures["client_objects"]
    assert objects["after"] - objects["before"] < 2000, objects      # nothing kept per episode (600 of them)
    server = figures["server_rss_kb"]
    assert server["after"] - server["before"] < 16 * 1024, server    # well under 27 KB per episode
