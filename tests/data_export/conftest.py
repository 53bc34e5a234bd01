"""A real run directory for the export tests: `gecko bfcl` with the scripted noisy agent and GATS (2 retries) on a
real Gecko (2 workers, rules, no state model) serving the sample's toolkits, made once per session."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.bfcl.loader import load_category
from tests.bfcl.bfcl_support import SINGLE_TURN_TOOLKITS, require_toolkits, run_single
from utils.procs import gecko_server

SAMPLE = {"simple_python": 16, "multiple": 8, "parallel": 8}
"""First N tasks of each category."""


def sample_ids() -> tuple[str, ...]:
    """The sample's task ids."""
    return tuple(task.id for category, n in SAMPLE.items() for task in load_category(category)[:n])


@pytest.fixture(scope="session")
def noisy_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The run directory of the sample (scripted-noisy, seed 0, 2 retries)."""
    require_toolkits()
    toolkits = tmp_path_factory.mktemp("export-toolkits")
    for task_id in sample_ids():
        shutil.copy(SINGLE_TURN_TOOLKITS / f"{task_id}.json", toolkits / f"{task_id}.json")
    state = tmp_path_factory.mktemp("export-gecko-state")
    with gecko_server([toolkits], workers=2, state_dir=state, extra=["--state-model", "none"],
                      log_path=state / "server.log") as url:
        summary = run_single(url, tmp_path_factory.mktemp("export-run"), categories=tuple(SAMPLE),
                             model="scripted-noisy", ids=sample_ids(), max_retries=2, seed=0)
    yield summary.run_dir
