"""`run_bfcl_single.py` end to end: run directory and config, resume into the same file, Ctrl-C safety,
and the preflight that refuses a misconfigured Gecko."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from bfcl_support import SINGLE_TURN_TOOLKITS, require_toolkits

from benchmarks.bfcl.export import read_results
from utils.paths import REPO_ROOT
from utils.procs import gecko_server

RESULT = Path("results") / "scripted-oracle" / "non_live" / "BFCL_v4_simple_python_result.json"


def _cli(*args: str) -> list[str]:
    return [sys.executable, str(REPO_ROOT / "run_bfcl_single.py"), "--no-progress", *args]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_cli(*args), capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)


def test_run_records_config_and_resume_appends_to_the_same_file(sample_gecko: str, tmp_path: Path) -> None:
    common = ("--category", "simple_python", "--model", "scripted-oracle", "--gecko-url", sample_gecko,
              "--output-dir", str(tmp_path))
    first = _run(*common, "--num-tasks", "5")
    assert first.returncode == 0, first.stderr
    again = _run(*common, "--num-tasks", "8")
    assert again.returncode == 1 and "resume" in again.stderr
    resumed = _run(*common, "--num-tasks", "8", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    records = read_results(tmp_path / RESULT)
    assert sorted(r.id for r in records) == sorted(f"simple_python_{i}" for i in range(8))
    runs = sorted((tmp_path / "runs" / "scripted-oracle").iterdir())
    assert len(runs) == 2
    summary = json.loads((runs[1] / "summary.json").read_text())["categories"][0]
    assert summary["skipped"] == 5 and summary["finished"] == 3 and summary["accuracy"] == 1.0
    config = json.loads((runs[0] / "config.json").read_text())
    assert config["models"]["planner"] == "scripted-oracle" and config["models"]["state"] == "none"
    assert config["gats"]["max_retries"] == 2 and "commit" in config["git"] and config["versions"]["bfcl-eval"]
    assert (tmp_path / "score" / "scripted-oracle").is_dir()


def test_ctrl_c_loses_no_finished_task(sample_gecko: str, tmp_path: Path) -> None:
    args = ("--category", "simple_python", "--model", "scripted-noisy", "--gecko-url", sample_gecko,
            "--output-dir", str(tmp_path), "--num-tasks", "60", "--workers", "1")
    proc = subprocess.Popen(_cli(*args), cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    result = tmp_path / RESULT.parent.parent.parent / "scripted-noisy" / "non_live" / RESULT.name
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if result.exists() and result.read_bytes().count(b"\n") >= 5:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "--resume" in err
    done = read_results(result)
    assert 5 <= len(done) < 60 and len({r.id for r in done}) == len(done)
    resumed = _run(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(r.id for r in read_results(result)) == sorted(f"simple_python_{i}" for i in range(60))


def test_preflight_refuses_a_state_model(tmp_path: Path) -> None:
    require_toolkits()
    toolkits = tmp_path / "toolkits"
    toolkits.mkdir()
    shutil.copy(SINGLE_TURN_TOOLKITS / "simple_python_0.json", toolkits)
    with gecko_server([toolkits], workers=1, state_dir=tmp_path / "state") as url:
        out = _run("--category", "simple_python", "--model", "scripted-oracle", "--gecko-url", url,
                   "--output-dir", str(tmp_path / "out"), "--num-tasks", "1")
    assert out.returncode == 1
    assert "state model" in out.stderr and "--state-model none" in out.stderr
    assert not (tmp_path / "out").exists()


def test_preflight_says_how_to_start_gecko(tmp_path: Path) -> None:
    from utils.procs import free_port

    out = _run("--category", "simple_python", "--model", "scripted-oracle", "--gecko-url",
               f"http://127.0.0.1:{free_port()}", "--output-dir", str(tmp_path), "--num-tasks", "1")
    assert out.returncode == 1 and "not reachable" in out.stderr and "run_gecko_server.py" in out.stderr


def test_unknown_scripted_agent_is_refused(tmp_path: Path) -> None:
    out = _run("--category", "simple_python", "--model", "scripted-genius", "--output-dir", str(tmp_path))
    assert out.returncode == 2 and "scripted-oracle" in out.stderr
