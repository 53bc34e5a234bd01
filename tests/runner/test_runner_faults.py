"""`--faults` on the runners (`benchmarks.runner.faults`) and the robustness block (`robustness.py`): the flags,
the fault arm, the per-task policies, and the block's figures on hand-made entries with known answers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.runner import LedgerEntry, WorkItem
from benchmarks.runner.faults import (
    TaskFaults,
    add_fault_arguments,
    checked_policy,
    clean_group,
    clean_key,
    is_fault_arm,
    policy_from_args,
    with_fault_arm,
)
from benchmarks.runner.report import load_run
from benchmarks.runner.report_html import render
from benchmarks.runner.robustness import robustness_block, robustness_lines
from benchmarks.runner.summary import TABLE_LEGEND, format_table, summarise
from utils.faults import PolicyError, load_policy


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_fault_arguments(parser)
    return parser.parse_args(list(argv))


def test_no_faults_flag_means_no_policy_and_no_fault_arm() -> None:
    assert policy_from_args(_args()) is None
    items = [WorkItem("a", "g", None), WorkItem("b", "g", None)]
    assert with_fault_arm(items, None) == items
    assert not TaskFaults.of(None, "a").active


def test_a_profile_or_file_gives_the_policy_and_fault_seed_replaces_its_seed(tmp_path: Path) -> None:
    assert policy_from_args(_args("--faults", "rate-limited")) == load_policy("rate-limited").public()
    seeded = policy_from_args(_args("--faults", "rate-limited", "--fault-seed", "99"))
    assert seeded is not None and seeded["seed"] == 99 and seeded["rules"] == load_policy("rate-limited").public()["rules"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"name": "mine", "seed": 3, "rules": [{"name": "r", "do": {"kind": "unavailable"}}]}))
    policy = policy_from_args(_args("--faults", str(path)))
    assert policy is not None and policy["name"] == "mine" and policy["seed"] == 3


def test_bad_fault_flags_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--fault-seed needs --faults"):
        policy_from_args(_args("--fault-seed", "1"))
    with pytest.raises(PolicyError, match="no fault policy file 'nope'"):
        policy_from_args(_args("--faults", "nope"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - name: r\n    do: {kind: explode}\n")
    with pytest.raises(PolicyError, match="invalid fault policy"):
        policy_from_args(_args("--faults", str(bad)))
    with pytest.raises(PolicyError):
        checked_policy({"rules": [{"name": "r", "do": {"kind": "explode"}}]})


def test_the_fault_arm_follows_each_task_with_its_own_key_and_group() -> None:
    items = with_fault_arm([WorkItem("t1", "base", "T1"), WorkItem("t2", "base", "T2")], {"rules": []})
    assert [(i.key, i.group, i.task) for i in items] == [
        ("t1", "base", "T1"), ("t1~faults", "base+faults", "T1"), ("t2", "base", "T2"), ("t2~faults", "base+faults", "T2")]
    assert is_fault_arm("t1~faults") and not is_fault_arm("t1")
    assert clean_key("t1~faults") == clean_key("t1") == "t1"
    assert clean_group("base+faults") == clean_group("base") == "base"


def test_task_policies_draw_one_stream_per_task_and_side_only_in_the_fault_arm() -> None:
    policy = load_policy("flaky-network").public()
    assert TaskFaults.of(policy, "t1") == TaskFaults()
    faults = TaskFaults.of(policy, "t1~faults")
    assert faults.active and faults.simulated is not None and faults.real is not None
    assert (faults.simulated.stream, faults.real.stream) == ("t1/simulated", "t1/real")
    assert faults.simulated.seed == policy["seed"] and TaskFaults.of(policy, "t1~faults") == faults
    assert faults.session_config() == {"faults": faults.simulated.public()}
    assert faults.row() == {"fault_policy": {"name": "flaky-network", "seed": 17}}
    assert TaskFaults().session_config() == {} and TaskFaults().row() == {}


def _counts(calls: int, *, failed: int = 0, recovered: int = 0, injected: int = 0, errors: int = 0,
            injected_recovered: int = 0, flexible: int = 0, faulted: int = 0, gave_up: int = 0,
            by_kind: dict[str, int] | None = None) -> dict[str, Any]:
    return {"episodes": 1, "calls": calls, "failed": failed, "recovered": recovered, "injected": injected,
            "injected_errors": errors, "injected_recovered": injected_recovered, "flexible": flexible,
            "compliant": calls, "faulted_episodes": faulted, "gave_up": gave_up, "by_kind": by_kind or {}}


def _entry(key: str, score: float | None, counts: dict[str, Any], tokens: int = 0, status: str = "done",
           **info: Any) -> dict[str, Any]:
    return {"key": key, "group": "base+faults" if is_fault_arm(key) else "base", "status": status, "score": score,
            "info": {"robustness": {"real": counts, "all": counts}, **info},
            "usage": [{"role": "planner", "input_tokens": tokens, "output_tokens": 0}]}


POLICY_ROW = {"fault_policy": {"name": "flaky-network", "seed": 17}}
ENTRIES = [
    _entry("a", 1.0, _counts(4), tokens=100),
    _entry("a~faults", 1.0, _counts(6, failed=2, recovered=2, injected=3, errors=2, injected_recovered=2, flexible=1,
                                     faulted=1, by_kind={"unavailable": 2, "delay": 1}), tokens=160, **POLICY_ROW),
    _entry("b", 1.0, _counts(2), tokens=50),
    _entry("b~faults", 0.0, _counts(2, failed=1, injected=1, errors=1, faulted=1, gave_up=1,
                                     by_kind={"timeout": 1}), tokens=50, **POLICY_ROW),
    _entry("c", 0.0, _counts(3), tokens=10),
    _entry("c~faults", None, _counts(0), status="untested"),
]


def test_the_block_compares_the_arms_with_known_answers() -> None:
    block = robustness_block(ENTRIES)
    assert block is not None
    assert block["policy"] == {"name": "flaky-network", "seed": 17}
    assert block["tasks"] == {"clean_done": 3, "faults_done": 2, "paired": 2}
    assert block["accuracy"] == {"clean": pytest.approx(2 / 3, abs=1e-6), "faults": 0.5, "paired_clean": 1.0,
                                 "paired_faults": 0.5, "drop": 0.5}
    assert block["groups"]["base"]["clean"] == pytest.approx(2 / 3, abs=1e-6) and block["groups"]["base"]["faults"] == 0.5
    faults = block["metrics"]["faults"]["all"]
    assert faults["recovery_rate"] == pytest.approx(2 / 3, abs=1e-6)  # 2 of 3 failed calls followed by a success
    assert faults["recovery_rate_injected"] == pytest.approx(2 / 3, abs=1e-6)
    assert faults["flexibility"] == pytest.approx(1 / 3, abs=1e-6)
    assert faults["give_up_rate"] == 0.5 and faults["schema_compliance"] == 1.0
    assert block["metrics"]["faults"]["real"]["calls"] == 8 and "simulated" not in block["metrics"]["faults"]
    assert block["metrics"]["clean"]["all"]["recovery_rate"] is None  # nothing failed: no rate, not 0 or 1
    assert block["injected"] == {"total": 4, "errors": 3, "by_kind": {"delay": 1, "timeout": 1, "unavailable": 2}}
    assert block["by_kind"]["timeout"] == {"injected": 1, "tasks": 1, "accuracy": 0.0}
    assert block["by_kind"]["unavailable"] == {"injected": 2, "tasks": 1, "accuracy": 1.0}
    assert block["extra"]["calls_per_task"] == {"clean": 3.0, "faults": 4.0, "extra": 1.0}
    assert block["extra"]["tokens_per_task"] == {"clean": 75.0, "faults": 105.0, "extra": 30.0}
    lines = "\n".join(robustness_lines(block))
    assert "policy flaky-network, seed 17; 2 tasks done in both arms" in lines
    assert "clean 1.0000  under faults 0.5000  drop 0.5000" in lines
    assert "injected    4 (3 errors)" in lines and "calls 3.00 → 4.00 (+1.00)" in lines


def test_no_fault_arm_no_block() -> None:
    assert robustness_block([e for e in ENTRIES if not is_fault_arm(e["key"])]) is None
    assert robustness_lines(None) == []


def test_the_report_shows_the_block(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"benchmark": "bfcl-multi", "config": {"model": "m"}}))
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(e) + "\n" for e in ENTRIES))
    run = load_run(tmp_path)
    assert run.robustness == robustness_block(ENTRIES)
    page = render([run])
    assert "Robustness under faults" in page and "flaky-network (seed 17)" in page and "+1.00" in page


def test_the_table_totals_each_arm_apart_and_says_what_its_columns_count(tmp_path: Path) -> None:
    items = with_fault_arm([WorkItem(f"t{i}", "simple", i) for i in range(4)], {"rules": []})
    scores = {"t0": 1.0, "t1": 1.0, "t2": 1.0, "t3": 0.0, "t0~faults": 0.0, "t1~faults": 0.0, "t2~faults": 1.0}
    entries = [LedgerEntry(key=item.key, group=item.group, status="done", score=scores[item.key])
               for item in items if item.key in scores]
    before = {entry.key: entry for entry in entries[:2]}  # done by an earlier run of the directory
    summary = summarise("bfcl", tmp_path, items, entries, before)
    rows = {line.split("  ")[0]: line.split() for line in format_table(summary).splitlines()[1:5]}
    assert set(rows) == {"simple", "simple+faults", "total, no faults", "total, with faults"}
    assert rows["total, no faults"][-4:] == ["0", "0", "0.6667", "0.7500"]  # no fault arm's score in the clean total
    assert rows["total, with faults"][-3:] == ["1", "0.5000", "0.3333"]
    header = format_table(summary).splitlines()[0]
    assert "done before" in header and "done now" in header and "skipped" not in header
    assert TABLE_LEGEND in format_table(summary) and "done before = scored by an earlier run" in TABLE_LEGEND
    assert summary.arms["with faults"].done == 2 and summary.total.done + summary.total.skipped == 7
