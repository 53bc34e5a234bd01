"""The official `bfcl` CLI reads our result files as they are: `gecko score --official` runs `bfcl evaluate` (from
`.venv-bfcl`, the pinned lite set, built on first use) and its counts equal ours, single- and multi-turn, on a
partial run; `.venv/bin/bfcl` runs the official CLI. Slow: the first run builds the venv (~1 min)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchmarks.bfcl.official import OFFICIAL_HANDLER, SHIM, bfcl_venv, install_shim
from gecko_cli.main import main as gecko_main
from tests.bfcl.bfcl_support import run_single
from utils.faults import load_policy
from utils.paths import REPO_ROOT

# The first test's set-up may build .venv-bfcl (minutes on a fresh machine; benchmarks.bfcl.official).
pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module", autouse=True)
def _official_venv() -> None:
    bfcl_venv().ensure()


def test_official_counts_equal_ours_on_a_partial_single_turn_and_multi_turn_run(
        sample_gecko: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    single = run_single(sample_gecko, tmp_path / "single", categories=("simple_python", "live_simple"),
                        model="scripted-noisy", num_tasks=25, max_retries=0)
    assert gecko_main(["bfcl-multi", "--model", "scripted-noisy", "--num-tasks", "4", "--gecko-url", "auto",
                       "--output-dir", str(tmp_path / "multi"), "--no-progress", "--no-cache"]) == 0
    (multi,) = (tmp_path / "multi").iterdir()
    printed = capsys.readouterr().out
    assert "--test-category all --partial-eval" in printed  # the printed score command works as printed
    for run_dir in (single.run_dir, multi):
        capsys.readouterr()
        assert gecko_main(["score", "--official", str(run_dir)]) == 0
        out = capsys.readouterr().out
        assert "the official tools agree with our figures" in out and f"--model {OFFICIAL_HANDLER}" in out
    ours = json.loads((single.run_dir / "summary.json").read_text())["evaluation"]["categories"]
    handler = OFFICIAL_HANDLER.replace("/", "_")
    for category, group in (("simple_python", "non_live"), ("live_simple", "live")):
        official = single.run_dir / "score_official" / handler / group / f"BFCL_v4_{category}_score.json"
        header = json.loads(official.read_text().splitlines()[0])
        assert (header["correct_count"], header["total_count"]) == (ours[category]["correct"], 25)
        assert header["accuracy"] == ours[category]["accuracy"] and 0 < header["accuracy"] < 1


def test_a_fault_arm_is_left_out_of_the_official_check(sample_gecko: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A `--faults` run's fault arm (group `simple_python+faults`) has no official files: the check scores the
    clean arm and agrees (it used to look the arm up as a BFCL category)."""
    run = run_single(sample_gecko, tmp_path, categories=("simple_python",), model="scripted-noisy", num_tasks=3,
                     max_retries=0, faults=load_policy("flaky-network").public())
    capsys.readouterr()
    assert gecko_main(["score", "--official", str(run.run_dir)]) == 0
    out = capsys.readouterr().out
    assert "the official tools agree with our figures" in out
    assert "simple_python correct" in out and "simple_python+faults correct" not in out


def test_the_installed_bfcl_entry_point_runs_the_official_cli(tmp_path: Path) -> None:
    shim = tmp_path / "bfcl"
    install_shim(shim)
    assert shim.read_text() == SHIM and (REPO_ROOT / ".venv" / "bin" / "bfcl").read_text() == SHIM
    done = subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "bfcl"), "--help"], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0 and "evaluate" in done.stdout, done.stderr
