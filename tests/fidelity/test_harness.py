"""`gecko fidelity` end to end, offline: one task of every source and kind, a Gecko started for the run (rules
engines), the report files, and the figures whose answers are known for the rules engines' world model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.fidelity.report import headline
from gecko_cli.main import main as gecko_main

pytestmark = pytest.mark.integration


def _run(out: Path, *flags: str) -> tuple[dict, Path]:
    code = gecko_main(["fidelity", "--gecko-url", "auto", "--output-dir", str(out), "--no-progress", *flags])
    assert code in (0, None)
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    return json.loads((run_dir / "fidelity.json").read_text()), run_dir


def test_one_task_per_source_and_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, run_dir = _run(tmp_path, "--sources", "bfcl,tau2-airline,tau2-retail", "--num-tasks", "1")
    assert (run_dir / "fidelity.md").read_text().startswith("# Fidelity report")
    trajectories = report["trajectories"]
    assert set(trajectories) == {"bfcl", "tau2-airline", "tau2-retail"}
    assert all(kinds["gold"] == kinds["noisy"] == 1 for kinds in trajectories.values())
    assert trajectories["bfcl"]["perturbed"] == 1
    top = headline(report)
    assert "fidelity: " + json.dumps(top) in capsys.readouterr().out
    assert report["response"]["overall"]["gecko_schema_valid"] == 1.0, "every Gecko 200 fits its schema"
    # gold calls are correct: the official graders pass them, and the schema-level perturbations are all caught
    assert report["judge"]["by_kind"]["gold"]["official_failure"] == 0
    by_kind = report["validation"]["by_kind"]
    for kind in {"missing_required", "unknown_argument", "misspelled_tool"} & by_kind.keys():
        assert by_kind[kind]["tpr"] == 1.0, kind
    assert 0.0 <= top["state_field_agreement"] <= 1.0 and top["steps"] > 0


def test_rest_consistency_of_the_bundled_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, run_dir = _run(tmp_path, "--sources", "rest")
    capsys.readouterr()
    assert gecko_main(["score", "--official", str(run_dir)]) == 0  # no official tool: said, not a crash
    assert "no official scorer" in capsys.readouterr().out
    # the world model: a read after a create, a list after it and a read after a delete agree with them
    checks = report["consistency"]["by_check"]
    assert {name: check["rate"] for name, check in checks.items()} == {
        "get_after_post": 1.0, "list_after_post": 1.0, "get_after_delete": 1.0}
