"""`gecko bfcl --agent-backend camel` end to end: a CAMEL ChatAgent (unmodified camel-ai) drives the stub model
through GATS on a real Gecko; scripted agents refuse the flag."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.bfcl.export import read_results
from tests.infra import require_installed
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub
from utils.paths import REPO_ROOT

require_installed("camel", "needs the [camel] extra (make setup installs it)")
pytestmark = pytest.mark.integration


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO_ROOT / "run_bfcl_single.py"), "--no-progress", *args],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)


def test_camel_backend_runs_gats_with_the_stub(sample_gecko: str, tmp_path: Path) -> None:
    with run_stub(StubConfig()) as stub:  # default plan: call the first tool with schema-made arguments, then answer
        model = stub.model("gecko-stub")
        done = _run("--category", "simple_python", "--num-tasks", "3", "--model", model, "--agent-backend", "camel",
                    "--max-retries", "1", "--gecko-url", sample_gecko, "--output-dir", str(tmp_path))
        planner_requests = stub.stats()["by_stage"].get("planner", 0)
    assert done.returncode == 0, done.stderr
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.endswith("_camel")
    config = json.loads((run_dir / "config.json").read_text())
    assert config["config"]["agent_backend"] == "camel"
    tasks = [json.loads(line) for line in (run_dir / "tasks.jsonl").read_text().splitlines()]
    assert [t["status"] for t in tasks] == ["done"] * 3
    assert all(u["role"] == "planner" and u["provider"] == "camel" for t in tasks for u in t["usage"])
    (result_file,) = (run_dir / "result").rglob("BFCL_v4_simple_python_result.json")
    assert [r.id for r in read_results(result_file)] == [f"simple_python_{i}" for i in range(3)]
    assert planner_requests >= 3, "CAMEL called the model through the stub"


def test_scripted_agents_refuse_an_agent_backend(sample_gecko: str, tmp_path: Path) -> None:
    done = _run("--category", "simple_python", "--model", "scripted-oracle", "--agent-backend", "camel",
                "--gecko-url", sample_gecko, "--output-dir", str(tmp_path))
    assert done.returncode != 0 and "scripted agent" in done.stderr
