"""The command: streaming JSON Lines in and out, summary, --keep, --resume after a crash, worker processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gecko.verify.cli import main
from tests.verify.verify_data import bfcl_row, openai_row, xlam_row

REPO_ROOT = Path(__file__).resolve().parents[2]


def rows() -> list[dict[str, Any]]:
    """Ten samples of mixed formats: 6 valid, 3 invalid_call, 1 task_failed."""
    good_xlam = xlam_row([{"name": "convert_currency", "arguments": {"amount": 10, "target": "EUR"}}], row_id=2)
    bad_xlam = xlam_row([{"name": "convert_currency", "arguments": {"amount": 10}}], row_id=3)
    silent = openai_row({"city": "x"}, answer=None)
    silent["messages"] = silent["messages"][:1]
    return [openai_row({"city": "Paris"}), good_xlam, bad_xlam, bfcl_row([{"math.hypot": {"x": [3], "y": [4]}}], "b1"),
            openai_row({"city": 1}), silent, openai_row({"city": "Rome", "unit": "f"}),
            bfcl_row([{"math.hypot": {"x": [3]}}], "b2"), openai_row({"city": "Oslo"}, result="cold"),
            bfcl_row([{"math.hypot": {"x": [1], "y": [2]}}], "b3")]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    return path


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def run(*argv: str) -> int:
    return main([*argv, "--no-progress", "--state-dir", str(Path(argv[0]).parent / "state")])


def test_results_summary_and_keep(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = dataset.with_name("out.jsonl")
    assert run(str(dataset), "-o", str(out), "--keep", "valid") == 0
    summary = json.loads(capsys.readouterr().out)
    lines = results(out)
    assert [r["line"] for r in lines] == list(range(10))
    assert summary["verdicts"] == {"valid": 6, "invalid_call": 3, "task_failed": 1}
    assert summary["formats"] == {"openai": 5, "xlam": 2, "bfcl": 3}
    assert summary["error_kinds"] == {"required": 2, "type": 1}
    assert summary["tools"]["convert_currency"] == {"calls": 2, "invalid": 1}
    assert {p["id"] for p in summary["not_passed"]} == {"3", "4", "5", "b2"}
    assert json.loads(out.with_name("out.jsonl.summary.json").read_text())["verdicts"] == summary["verdicts"]
    kept = out.with_name("out.valid.jsonl").read_text(encoding="utf-8").splitlines()
    assert kept == [json.dumps(r) for r, res in zip(rows(), lines, strict=True) if res["verdict"] == "valid"]
    assert summary["kept"] == 6


def test_keep_invalid_to_a_named_file(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kept = dataset.with_name("bad.jsonl")
    assert run(str(dataset), "-o", str(dataset.with_name("o.jsonl")), "--keep", "invalid", "--kept", str(kept)) == 0
    assert len(kept.read_text().splitlines()) == 4


def test_resume_after_a_crash_keeps_finished_results(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = dataset.with_name("out.jsonl")
    assert run(str(dataset), "-o", str(out), "--keep", "valid") == 0
    full = results(out)
    whole = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(whole[:4]) + whole[4][:25], encoding="utf-8")  # a crash mid-line
    kept = out.with_name("out.valid.jsonl")
    kept.write_text("".join(kept.read_text().splitlines(keepends=True)[:1]) + "torn", encoding="utf-8")
    assert run(str(dataset), "-o", str(out)) == 2  # refuses to overwrite without --resume or --force
    capsys.readouterr()
    assert run(str(dataset), "-o", str(out), "--keep", "valid", "--resume") == 0
    summary = json.loads(capsys.readouterr().out)
    assert [(r["id"], r["verdict"]) for r in results(out)] == [(r["id"], r["verdict"]) for r in full]
    assert summary["samples"] == 10 and summary["run"]["samples_this_run"] == 6
    assert len(kept.read_text().splitlines()) == 6


def test_two_worker_processes_give_the_same_results(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = dataset.with_name("big.jsonl")
    big.write_text(dataset.read_text() * 20, encoding="utf-8")  # 200 lines: several chunks per worker
    one, two = big.with_name("one.jsonl"), big.with_name("two.jsonl")
    assert run(str(big), "-o", str(one), "-j", "1") == 0
    assert run(str(big), "-o", str(two), "-j", "2") == 0
    strip = [{k: v for k, v in r.items() if k != "calls"} for r in results(one)]
    assert strip == [{k: v for k, v in r.items() if k != "calls"} for r in results(two)]


def test_bfcl_answers_file_and_forced_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions, answers = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    questions.write_text(json.dumps(bfcl_row(None, "q1")) + "\n\n" + json.dumps(bfcl_row(None, "q2")) + "\n")
    answers.write_text(json.dumps({"id": "q1", "ground_truth": [{"math.hypot": {"x": [1], "y": [2]}}]}) + "\n")
    out = tmp_path / "r.jsonl"
    assert run(str(questions), "--answers", str(answers), "--format", "bfcl", "-o", str(out)) == 0
    assert [(r["id"], r["verdict"]) for r in results(out)] == [("q1", "valid"), ("q2", "malformed")]
    bad_answers = tmp_path / "bad.jsonl"
    bad_answers.write_text("{}\n")
    assert run(str(questions), "--answers", str(bad_answers), "-o", str(out), "--force") == 2
    assert "not a possible-answer line" in capsys.readouterr().err


def test_stdin_to_stdout_through_the_gecko_command(dataset: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "gecko_cli", "verify", "--no-progress", "--state-dir", str(tmp_path),
                           "-j", "1"], input=dataset.read_text(), capture_output=True, text=True, cwd=REPO_ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == 10 and lines[0]["verdict"] == "valid"
    assert json.loads(proc.stderr.strip().splitlines()[-1])["summary"]["samples"] == 10


def test_missing_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o.jsonl")) == 2
    assert "no such file" in capsys.readouterr().err
