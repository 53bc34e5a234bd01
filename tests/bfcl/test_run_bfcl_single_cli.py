"""`run_bfcl_single.py` (a shim over `gecko bfcl`) end to end: the run directory and its config, resume in
place (and its refusal of other settings), Ctrl-C safety, and the preflight that refuses a misconfigured Gecko."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.bfcl.export import read_results
from tests.bfcl.bfcl_support import SINGLE_TURN_TOOLKITS, require_toolkits
from utils.paths import REPO_ROOT
from utils.procs import free_port, gecko_server, stop, wait_healthy

RESULT = Path("result") / "scripted-oracle" / "non_live" / "BFCL_v4_simple_python_result.json"


def _cli(*args: str) -> list[str]:
    return [sys.executable, str(REPO_ROOT / "run_bfcl_single.py"), "--no-progress", *args]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_cli(*args), capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)


def _only_run_dir(output_dir: Path) -> Path:
    (run_dir,) = output_dir.iterdir()
    return run_dir


def test_run_records_config_and_resume_continues_the_same_directory(sample_gecko: str, tmp_path: Path) -> None:
    common = ("--category", "simple_python", "--model", "scripted-oracle", "--gecko-url", sample_gecko,
              "--output-dir", str(tmp_path))
    first = _run(*common, "--num-tasks", "5")
    assert first.returncode == 0, first.stderr
    run_dir = _only_run_dir(tmp_path)
    assert run_dir.name.endswith("_bfcl_scripted-oracle") and str(run_dir) in first.stdout
    (score,) = [line.split("score:", 1)[1].split() for line in first.stdout.splitlines() if "score:" in line]
    assert score[:3] == ["python", "-m", "benchmarks.bfcl.evaluate"] and "--partial-eval" in score
    printed = subprocess.run([sys.executable, *score[1:]], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert printed.returncode == 0, printed.stderr  # the printed command works on a --num-tasks run as printed
    resumed = _run(*common, "--num-tasks", "8", "--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert _only_run_dir(tmp_path) == run_dir  # continued in place, no second directory
    records = read_results(run_dir / RESULT)
    assert [r.id for r in records] == [f"simple_python_{i}" for i in range(8)]
    summary = json.loads((run_dir / "summary.json").read_text())
    group = summary["groups"]["simple_python"]
    assert (group["skipped"], group["done"], group["score"]) == (5, 3, 1.0)
    assert summary["evaluation"]["categories"]["simple_python"]["accuracy"] == 1.0
    config = json.loads((run_dir / "config.json").read_text())
    assert config["benchmark"] == "bfcl" and config["config"]["model"] == "scripted-oracle"
    assert config["environment"]["models"]["state"] == "none" and config["config"]["max_retries"] == 2
    assert "commit" in config["git"] and config["versions"]["bfcl-eval"] and len(config["resumes"]) == 1
    assert (run_dir / "score" / "scripted-oracle").is_dir()
    assert len((run_dir / "tasks.jsonl").read_text().splitlines()) == 8

    other = _run(*common, "--num-tasks", "8", "--max-retries", "1", "--resume", str(run_dir))
    assert other.returncode == 1 and "max_retries was 2, now 1" in other.stderr
    missing = _run(*common, "--resume", str(tmp_path / "nothing-here"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr


def test_ctrl_c_loses_no_finished_task(sample_gecko: str, tmp_path: Path) -> None:
    args = ("--category", "simple_python", "--model", "scripted-noisy", "--gecko-url", sample_gecko,
            "--output-dir", str(tmp_path), "--num-tasks", "60", "--workers", "1")
    proc = subprocess.Popen(_cli(*args), cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    ledger = None
    while time.monotonic() < deadline and proc.poll() is None:
        runs = list(tmp_path.iterdir())
        ledger = runs[0] / "tasks.jsonl" if runs else None
        if ledger is not None and ledger.exists() and ledger.read_bytes().count(b"\n") >= 5:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "--resume" in err
    run_dir = _only_run_dir(tmp_path)
    result = run_dir / "result" / "scripted-noisy" / "non_live" / RESULT.name
    done = read_results(result)  # the official file is written on Ctrl-C too
    assert 5 <= len(done) < 60 and len({r.id for r in done}) == len(done)
    assert json.loads((run_dir / "summary.json").read_text())["interrupted"] is True
    resumed = _run(*args, "--resume", str(run_dir))
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
    out = _run("--category", "simple_python", "--model", "scripted-oracle", "--gecko-url",
               f"http://127.0.0.1:{free_port()}", "--output-dir", str(tmp_path), "--num-tasks", "1")
    assert out.returncode == 1 and "not reachable" in out.stderr and "run_gecko_server.py" in out.stderr


def test_bad_flags_are_refused(tmp_path: Path) -> None:
    out = _run("--category", "simple_python", "--model", "scripted-genius", "--output-dir", str(tmp_path))
    assert out.returncode == 2 and "scripted-oracle" in out.stderr
    out = _run("--category", "simple_python", "--model", "scripted-oracle", "--error-rate", "2")
    assert out.returncode == 2 and "error_rate: Input should be less than or equal to 1" in out.stderr
    for flags, message in ((["--max-retries", "-1"], "max_retries: Input should be greater than or equal to 0"),
                           (["--num-tasks", "0"], "num_tasks: Input should be greater than or equal to 1"),
                           (["--workers", "0"], "workers must be at least 1"),
                           (["--ids-file", str(tmp_path / "none.txt")], "cannot read the ids file"),
                           (["--model", "scripted-oracle"], "the following arguments are required: --category")):
        args = flags if "--model" in flags else ["--category", "simple_python", "--model", "scripted-oracle", *flags]
        out = _run(*args, "--output-dir", str(tmp_path))
        assert out.returncode == 2 and message in out.stderr, (flags, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert not any(tmp_path.glob("*/tasks.jsonl"))


def test_gecko_killed_mid_run_stops_the_run_untested_then_resume_finishes_it(tmp_path: Path) -> None:
    require_toolkits()
    toolkits = tmp_path / "toolkits"
    toolkits.mkdir()
    for i in range(60):
        shutil.copy(SINGLE_TURN_TOOLKITS / f"simple_python_{i}.json", toolkits)
    port = free_port()
    server = [sys.executable, str(REPO_ROOT / "run_gecko_server.py"), "--schemas-dir", str(toolkits), "--port",
              str(port), "--workers", "1", "--state-dir", str(tmp_path / "state"), "--state-model", "none",
              "--log-level", "warning"]
    url = f"http://127.0.0.1:{port}"
    gecko = subprocess.Popen(server, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    args = ("--category", "simple_python", "--model", "scripted-oracle", "--gecko-url", url, "--output-dir",
            str(tmp_path / "out"), "--num-tasks", "60", "--workers", "1", "--stop-after-untested", "3")
    try:
        wait_healthy(url, proc=gecko)
        run = subprocess.Popen(_cli(*args), cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None:
            ledgers = list((tmp_path / "out").glob("*/tasks.jsonl"))
            if ledgers and ledgers[0].read_bytes().count(b"\n") >= 3:
                break
            time.sleep(0.02)
        stop(gecko)  # Gecko goes away mid-run
        out, err = run.communicate(timeout=300)
    finally:
        stop(gecko)
    run_dir = _only_run_dir(tmp_path / "out")
    assert run.returncode == 3, err  # the circuit breaker, not "finished"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["exit_code"] == 3 and summary["total"]["untested"] >= 3 and summary["total"]["pending"] > 0
    assert all("Gecko" in u["reason"] or "Connect" in u["reason"] for u in summary["untested"]), summary["untested"]
    assert "3 tasks in a row were untested" in out and f"--resume {run_dir}" in out
    log = (run_dir / "run.log").read_text()
    assert "untested" in log and "failed for good" in log  # the retries and the outcomes are in run.log
    with gecko_server([toolkits], workers=1, state_dir=tmp_path / "state2", extra=["--state-model", "none"]) as again:
        resumed = _run("--resume", str(run_dir), "--gecko-url", again)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["total"]["done"] + summary["total"]["skipped"] == 60 and summary["untested"] == []
