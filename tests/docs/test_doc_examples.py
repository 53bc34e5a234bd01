"""Every shell and Python block of the user docs runs as written against a live Gecko (issue 33 item 10).

The blocks run in a scratch directory that links the checkout's files (so `.venv/bin/gecko`, `data/`, `.npm-tools/`
resolve as in a clone, and what a block writes stays out of the checkout), with the venv first on PATH, against a real
Gecko on the bundled example toolkits: `localhost:8000` / `127.0.0.1:8000` in a block become that server's address,
and `$SID` is a fresh session of it. A shell block runs under `set -euo pipefail` with `curl` failing on an HTTP error
(unless marked `http-errors`), so a doc whose command fails, or whose call is refused, fails here. The blocks that are
not run say why in the page (`<!-- no-test: … -->`, `tests/docs/doc_blocks.py`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.doc_blocks import TEST_OPTIONS, DocBlock, doc_blocks
from utils.paths import REPO_ROOT
from utils.procs import GECKO_LISTENING, gecko_server, stop, wait_healthy

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

BLOCKS = doc_blocks()
TESTED = [b for b in BLOCKS if b.no_test is None]
BLOCK_TIMEOUT = 420.0
"""Seconds one block may take (the slow ones run short benchmark runs that start a Gecko of their own)."""
NOT_LINKED = {".git", ".gecko", "results", "runs", "site", "toolkits", "twins", "out", "test-artifacts"}
"""Checkout entries the scratch directory does not link: where the blocks write."""
_PORT_8000 = re.compile(r"\b(localhost|127\.0\.0\.1):8000\b")


def _param(block: DocBlock) -> object:
    marks = [pytest.mark.slow] if "slow" in block.options else []
    return pytest.param(block, id=block.id, marks=marks)


@pytest.fixture(scope="module")
def doc_gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Gecko on the bundled example toolkits (what `gecko serve` serves by default)."""
    state = tmp_path_factory.mktemp("doc-gecko")
    with gecko_server([], workers=1, state_dir=state, log_path=state / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch directory that looks like the checkout (links to its files) for the blocks to run in."""
    root = tmp_path_factory.mktemp("doc-workdir")
    for entry in REPO_ROOT.iterdir():
        if entry.name not in NOT_LINKED and not entry.name.endswith(".egg-info"):
            (root / entry.name).symlink_to(entry)
    return root


def _env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GECKO_") and k != "OPENAI_API_KEY"}
    env["PATH"] = f"{workdir / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(workdir / ".venv")
    env["GECKO_STATE_DIR"] = str(workdir / ".gecko")
    env["NO_COLOR"] = "1"
    return env


def _script(block: DocBlock, url: str) -> str:
    code = _PORT_8000.sub(url.removeprefix("http://"), block.code)
    if block.language == "python":
        return code
    fail = "" if "http-errors" in block.options else " --fail-with-body"
    return (f"set -euo pipefail\ncurl() {{ command curl --show-error{fail} \"$@\"; }}\n"
            f"SID=$(command curl -s {url}/session-id | python3 -c "
            "'import sys, json; print(json.load(sys.stdin)[\"session_id\"])')\n" + code)


def _command(block: DocBlock, script: Path) -> list[str]:
    return [sys.executable if block.language == "python" else "bash", str(script)]


def _served_url(output: Path, proc: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in output.read_text(errors="replace").splitlines():
            if GECKO_LISTENING in line:
                return line.split(GECKO_LISTENING, 1)[1].strip()
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"the block's server never listened (exit {proc.poll()}):\n"
                         f"{output.read_text(errors='replace')[-3000:]}")


@pytest.mark.parametrize("block", [_param(b) for b in TESTED])
def test_doc_block_runs(block: DocBlock, doc_gecko: str, workdir: Path, tmp_path: Path) -> None:
    output, script = tmp_path / "output.txt", tmp_path / ("block.py" if block.language == "python" else "block.sh")
    script.write_text(_script(block, doc_gecko))
    env = _env(workdir) | ({"GECKO_PORT": "0"} if "serves" in block.options else {})
    with open(output, "w") as out:
        proc = subprocess.Popen(_command(block, script), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, cwd=workdir, env=env, start_new_session=True)
        try:
            if "serves" in block.options:
                wait_healthy(_served_url(output, proc, BLOCK_TIMEOUT), timeout=BLOCK_TIMEOUT, proc=proc)
                return
            code = proc.wait(timeout=BLOCK_TIMEOUT)
        finally:
            stop(proc)  # the block's process group: whatever it started in the background too
    assert code == 0, f"{block.id} exited {code}:\n{block.code}\n--- output ---\n{output.read_text()[-4000:]}"


def test_every_untested_block_says_why() -> None:
    """No-test markers carry a reason, test markers only known options, and most blocks run."""
    assert BLOCKS, "no code blocks found in the docs"
    for block in BLOCKS:
        assert block.no_test is None or len(block.no_test) > 10, f"{block.id}: give the reason in no-test"
        assert block.options <= TEST_OPTIONS, f"{block.id}: unknown test option(s) {block.options - TEST_OPTIONS}"
    assert len(TESTED) > len(BLOCKS) / 2, [b.id for b in BLOCKS if b.no_test]
