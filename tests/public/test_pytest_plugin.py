"""The pytest plugin: a user's test file gets a Gecko from the fixtures alone (run in a pytest of its own)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.conftest import TOOLKITS_DIR
from utils.paths import REPO_ROOT

USER_TESTS = '''
def test_in_process(gecko_simulator):
    with gecko_simulator.session() as session:
        assert session.call("notes/create_note", {"title": "a", "body": "b"}).ok

def test_over_http(gecko_session, gecko_server):
    assert gecko_server.startswith("http://127.0.0.1:")
    reply = gecko_session.call("notes/create_note", {"title": "", "body": "b"})
    assert reply.status == 422 and reply.errors[0]["pointer"] == "/title"
'''


@pytest.mark.integration
def test_a_users_tests_get_gecko_from_the_fixtures(tmp_path: Path) -> None:
    (tmp_path / "test_agent.py").write_text(USER_TESTS)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\ngecko_toolkits = {TOOLKITS_DIR}\n")
    registered = any(e.value == "gecko_gats.pytest_plugin" for e in entry_points(group="pytest11"))
    plugin = [] if registered else ["-p", "gecko_gats.pytest_plugin"]  # an install registers it by entry point
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
