"""Run reports: the figures from a run directory's files (budget curve, failure kinds, usage, groups) and the
self-contained report.html of several runs side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.runner.report import budget_curve, failure_kind, load_run
from benchmarks.runner.report_html import report_command, write_report


def _attempt(index: int, status: str, *, errors: tuple[dict, ...] = (), error_kind: str | None = None,
             cost: float = 0.0, latency: float = 1.0) -> dict[str, Any]:
    call = {"name": "f", "ok": not errors and error_kind is None, "error_kind": error_kind, "errors": list(errors)}
    return {"index": index, "status": status, "calls": [call],
            "usage_by_role": {"planner": {"cost_usd": cost}} if cost else {},
            "latency_s": {"total": latency}}


SCHEMA = {"pointer": "/a", "keyword": "type", "message": "bad", "source": "syntactic"}
SEMANTIC = {"pointer": "", "keyword": "semantic", "message": "odd", "source": "semantic"}


def _run_dir(root: Path, name: str, retries: int, tasks: list[tuple[str, str, str, float | None, list[dict], int]]
             ) -> Path:
    """tasks: (key, group, status, score, attempts, best index)."""
    path = root / name
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"benchmark": "bfcl", "config": {"model": "m",
                                                                                  "max_retries": retries}}))
    lines: list[str] = []
    traces: dict[str, list[str]] = {}
    for key, group, status, score, attempts, best in tasks:
        usage = [{"role": "planner", "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.01}] * len(attempts)
        lines.append(json.dumps({"key": key, "group": group, "status": "pending", "score": None}))  # superseded
        lines.append(json.dumps({"key": key, "group": group, "status": status, "score": score, "seconds": 2.0,
                                 "usage": usage, "reason": "LLM down" if status == "untested" else None}))
        traces.setdefault(group, []).append(json.dumps({"id": key, "best": best, "attempts": attempts}))
    (path / "tasks.jsonl").write_text("\n".join(lines) + "\n{\"key\": \"torn")  # a torn last line is ignored
    for group, group_lines in traces.items():
        (path / f"traces_{group}.jsonl").write_text("\n".join(group_lines) + "\n")
    return path


@pytest.fixture
def gats_run(tmp_path: Path) -> Path:
    return _run_dir(tmp_path, "with-gats", 2, [
        ("a", "simple", "done", 1.0, [_attempt(0, "success", cost=0.5)], 0),
        ("b", "simple", "done", 1.0, [_attempt(0, "failed", errors=(SCHEMA,), cost=0.5),
                                      _attempt(1, "success", cost=0.5)], 1),
        ("c", "multiple", "done", 0.0, [_attempt(0, "failed", errors=(SEMANTIC,)), _attempt(1, "failed"),
                                        _attempt(2, "failed", error_kind="unknown_tool")], 1),
        ("d", "multiple", "untested", None, [_attempt(0, "error")], 0),
    ])


def test_budget_curve_failure_kinds_groups_and_usage(gats_run: Path) -> None:
    run = load_run(gats_run)
    assert [t.key for t in run.tasks] == ["a", "b", "c", "d"] and run.tasks[1].attempt_count == 2
    assert run.groups["simple"]["accuracy"] == 1.0 and run.groups["multiple"]["accuracy"] == 0.0
    assert run.groups["multiple"]["untested"] == 1 and run.accuracy == pytest.approx(2 / 3)
    # budget 0: b would have answered with its failed first attempt (counted wrong, estimated); c is wrong anyway
    (zero, one, two) = run.budget
    assert (zero.correct, zero.tasks, zero.estimated) == (1, 3, 2)  # b and c went past attempt 0
    assert (one.correct, one.estimated) == (2, 0) and one.accuracy == pytest.approx(2 / 3)  # c answered with attempt 1
    assert (two.correct, two.estimated) == (2, 0)
    assert zero.cost_usd == pytest.approx(1.0) and one.cost_usd == pytest.approx(1.5)
    assert zero.mean_latency_s == pytest.approx(1.0) and two.mean_latency_s == pytest.approx(2.0)
    assert run.failures == {"schema": 2, "semantic": 1, "judge": 1, "infrastructure": 2}
    assert run.usage_by_role["planner"] == {"calls": 7, "input_tokens": 70, "output_tokens": 35,
                                            "cost_usd": pytest.approx(0.07)}


def test_failure_kind_of_one_attempt() -> None:
    assert failure_kind(_attempt(0, "success")) is None
    assert failure_kind(_attempt(0, "failed")) == "judge"
    assert failure_kind(_attempt(0, "failed", errors=(SEMANTIC, SCHEMA))) == "schema"
    assert failure_kind(_attempt(0, "skipped", error_kind="malformed_arguments")) == "schema"
    assert failure_kind(_attempt(0, "skipped")) is None  # not judged, every call accepted: the official score says
    assert failure_kind(_attempt(0, "unjudged")) == "infrastructure"


def test_budget_curve_without_attempts_is_empty() -> None:
    assert budget_curve([], 1)[1].accuracy is None


def test_report_of_two_runs_side_by_side(gats_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = _run_dir(tmp_path, "no-gats", 0, [("a", "simple", "done", 1.0, [_attempt(0, "skipped")], 0),
                                                 ("b", "simple", "done", 0.0, [_attempt(0, "skipped")], 0)])
    target = tmp_path / "out" / "report.html"
    assert report_command([str(gats_run), str(baseline), "--output", str(target)]) == 0
    assert f"report: {target}" in capsys.readouterr().out
    page = target.read_text()
    assert page.count("<svg") >= 5 and "with-gats" in page and "no-gats" in page
    assert "Accuracy by retry budget" in page and "Failure kinds" in page and "Tokens per role" in page
    assert 'src="http' not in page and 'href="http' not in page and "<link" not in page  # self-contained
    assert write_report([baseline]) == baseline / "report.html"


def test_report_refuses_what_is_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report_command([str(tmp_path)]) == 1
    assert "not a run directory" in capsys.readouterr().err


def _turn(best: int, attempts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"status": "success", "simulated": {"best": best, "attempts": attempts}}


def test_budget_curve_of_a_multi_turn_run(tmp_path: Path) -> None:
    """Per-turn GATS (BFCL multi-turn, tau2's rehearsals): a task keeps its score at budget k only when every turn
    went on with an attempt <= k; cost and latency add the first k+1 attempts of every turn."""
    path = tmp_path / "multi"
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"benchmark": "bfcl-multi", "config": {"max_retries": 1}}))
    tasks = {"m0": (1.0, [_turn(0, [_attempt(0, "success", cost=0.1)]),
                          _turn(1, [_attempt(0, "failed", errors=(SCHEMA,), cost=0.1), _attempt(1, "success", cost=0.1)])]),
             "m1": (1.0, [_turn(0, [_attempt(0, "success", cost=0.1)]), _turn(0, [_attempt(0, "success", cost=0.1)])]),
             "m2": (0.0, [_turn(1, [_attempt(0, "failed"), _attempt(1, "failed")])])}
    (path / "tasks.jsonl").write_text("".join(
        json.dumps({"key": key, "group": "multi_turn_base", "status": "done", "score": score}) + "\n"
        for key, (score, _) in tasks.items()))
    (path / "traces_multi_turn_base.jsonl").write_text("".join(
        json.dumps({"id": key, "turns": turns}) + "\n" for key, (_, turns) in tasks.items()))
    run = load_run(path)
    assert [t.attempt_count for t in run.tasks] == [3, 2, 2]
    zero, one = run.budget
    assert (zero.correct, zero.tasks, zero.estimated) == (1, 3, 2)  # m0's second turn and m2 went past attempt 0
    assert (one.correct, one.estimated) == (2, 0) and one.accuracy == pytest.approx(2 / 3)
    assert zero.cost_usd == pytest.approx(0.4) and one.cost_usd == pytest.approx(0.5)
    assert zero.mean_latency_s == pytest.approx(5 / 3) and one.mean_latency_s == pytest.approx(7 / 3)
    assert run.failures == {"schema": 1, "semantic": 0, "judge": 2, "infrastructure": 0}
