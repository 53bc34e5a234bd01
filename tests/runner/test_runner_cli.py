"""The runner's command line on a scripted benchmark: exit codes, what a resume restores and refuses, and one
line for every bad flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.runner import run_command
from benchmarks.runner.summary import EXIT_ERROR, EXIT_OK, EXIT_UNSCORED, EXIT_USAGE
from tests.runner.runner_support import ScriptedBenchmark


def _run(tmp_path: Path, *argv: str) -> int:
    return run_command(ScriptedBenchmark, ["--output-dir", str(tmp_path / "out"), "--no-progress", "--no-cache",
                                           *argv])


def _only_run_dir(tmp_path: Path) -> Path:
    (run_dir,) = (tmp_path / "out").iterdir()
    return run_dir


def test_exit_code_says_whether_every_task_was_scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "--count", "3") == EXIT_OK
    assert _run(tmp_path, "--count", "3", "--untested", "t1") == EXIT_UNSCORED
    out = capsys.readouterr().out
    assert "untested: t1: Gecko down" in out and "--resume" in out
    summaries = [json.loads((d / "summary.json").read_text()) for d in sorted((tmp_path / "out").iterdir())]
    assert [s["exit_code"] for s in summaries] == [EXIT_OK, EXIT_UNSCORED]
    assert summaries[1]["untested"] == [{"key": "t1", "group": "odd", "reason": "Gecko down"}]
    log = (sorted((tmp_path / "out").iterdir())[1] / "run.log").read_text()
    assert "WARNING benchmarks.runner: task t1: untested (Gecko down)" in log and "task t0: done" in log


def test_resume_restores_the_original_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("t0\nt1  # comment\nt3\n")
    assert _run(tmp_path, "--count", "5", "--seed", "3", "--untested", "t1", "--ids-file", str(ids)) == EXIT_UNSCORED
    run_dir = _only_run_dir(tmp_path)
    flags = json.loads((run_dir / "config.json").read_text())["flags"]
    assert flags["ids"] == ["t0", "t1", "t3"] and flags["ids_file"] is None and flags["seed"] == 3
    assert "gecko_api_key" not in flags and "output_dir" not in flags
    ids.unlink()  # the recorded ids are used, not the file
    # --resume alone: same count, seed and selection; t1 is still untested (the --untested flag is restored too)
    assert _run(tmp_path, "--resume", str(run_dir)) == EXIT_UNSCORED
    # a flag given again replaces the recorded one
    assert _run(tmp_path, "--resume", str(run_dir), "--untested", "") == EXIT_OK
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["total"]["skipped"] == 2 and summary["total"]["done"] == 1
    config = json.loads((run_dir / "config.json").read_text())
    assert [r["config"]["seed"] for r in config["resumes"]] == [3, 3]
    assert list((tmp_path / "out").iterdir()) == [run_dir]  # one run dir: traces of all three runs in it
    traces = [json.loads(line)["id"] for line in (run_dir / "traces_odd.jsonl").read_text().splitlines()]
    assert sorted(traces) == ["t1", "t1", "t1", "t3"]


def test_resume_refuses_other_results_settings_and_a_missing_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "--count", "2", "--seed", "3") == EXIT_OK
    run_dir = _only_run_dir(tmp_path)
    capsys.readouterr()
    assert _run(tmp_path, "--resume", str(run_dir), "--seed", "4") == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "seed was 3, now 4" in err
    assert _run(tmp_path, "--resume", str(tmp_path / "nope")) == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not exist" in err
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--workers", "0"], "workers must be at least 1"),
    (["--stop-after-untested", "-1"], "stop_after_untested must be 0"),
    (["--ids-file", "/nonexistent/ids.txt"], "cannot read the ids file /nonexistent/ids.txt"),
    (["--gecko-api-key-file", "/nonexistent/key"], "cannot read the API key file '/nonexistent/key'"),
])
def test_bad_flags_get_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                           message: str) -> None:
    assert _run(tmp_path, *argv) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_unchecked_run_does_not_claim_the_official_tools_agree() -> None:
    from benchmarks.runner.command import format_official
    from benchmarks.runner.protocol import OfficialCheck

    unchecked = format_official(OfficialCheck(notes=("this benchmark has no official tool",)))
    assert "no official tool checked these figures" in unchecked and "agree" not in unchecked
    agreeing = format_official(OfficialCheck(rows=(("accuracy", 0.5, 0.5),), commands=("bfcl evaluate",)))
    assert agreeing.endswith("the official tools agree with our figures")
    differing = format_official(OfficialCheck(rows=(("accuracy", 0.5, 0.4),)))
    assert "DIFFERENT" in differing and "do NOT agree" in differing
