"""Fixtures for the BFCL runner tests: a real Gecko (2 workers, rules, no state model) on a sample of the
single-turn toolkits, copied to a temp dir so it starts in seconds."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.bfcl.bfcl_support import SINGLE_TURN_TOOLKITS, require_toolkits, sample_ids
from utils.procs import gecko_server


@pytest.fixture(scope="session")
def sample_gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Gecko on the sample's toolkits, state model off (the BFCL single-turn setting)."""
    require_toolkits()
    toolkits = tmp_path_factory.mktemp("bfcl-toolkits")
    for ids in sample_ids().values():
        for task_id in ids:
            shutil.copy(SINGLE_TURN_TOOLKITS / f"{task_id}.json", toolkits / f"{task_id}.json")
    state = tmp_path_factory.mktemp("bfcl-gecko-state")
    with gecko_server([toolkits], workers=2, state_dir=state, extra=["--state-model", "none"],
                      log_path=state / "server.log") as url:
        yield url
