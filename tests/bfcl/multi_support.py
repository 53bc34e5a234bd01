"""Shared helpers of the BFCL multi-turn tests: a real Gecko on the multi-turn class toolkits with the rules
state model (the offline multi-turn setting)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.bfcl.runtime import OPENAPI_DIR
from tests.infra import missing
from utils.procs import gecko_server

MULTI_TURN_TOOLKITS = OPENAPI_DIR / "multi_turn"


@contextmanager
def multi_turn_gecko(state_dir: Path, extra: list[str] | None = None, workers: int = 2) -> Iterator[str]:
    """Gecko on the eight class toolkits; `rules` engines unless `extra` says otherwise."""
    if not (MULTI_TURN_TOOLKITS / "GorillaFileSystem.json").exists():
        missing("the BFCL multi-turn toolkits are not built (make toolkits / scripts/build_toolkits.py)")
    with gecko_server([MULTI_TURN_TOOLKITS], workers=workers, state_dir=state_dir,
                      extra=extra or ["--state-model", "rules"], log_path=state_dir / "server.log") as url:
        yield url
