"""Shared constants and helpers of the BFCL runner tests (imported by conftest.py and the tests)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from benchmarks.bfcl.benchmark import BfclSingleTurn
from benchmarks.bfcl.categories import SINGLE_TURN_CATEGORIES
from benchmarks.bfcl.loader import load_category
from benchmarks.bfcl.run_config import BfclRunConfig
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.runner import RunOptions, RunSummary, run_benchmark
from tests.infra import missing

SINGLE_TURN_TOOLKITS = OPENAPI_DIR / "single_turn"
DATA_BUG_IDS = frozenset({
    "live_simple_106-63-0",
    "live_simple_112-68-0",
    "live_multiple_507-149-4",
    "live_multiple_862-181-3",
    "live_multiple_964-207-0",
    "simple_java_36",
    "simple_java_65",
})
"""Entries no output can pass (research/bfcl_eval.md §3; the two simple_java ones: an `ArrayList` of `any` whose ground
truth mixes numbers and booleans, where the official converter reads every item of such a list as a string)."""
SAMPLE_PER_CATEGORY = 12
NOISY_SAMPLE = {"simple_python": 60, "multiple": 30, "parallel": 30, "live_simple": 40}
"""Tasks the noisy-agent tests run (first N of each category)."""


def sample_ids() -> dict[str, list[str]]:
    """Task ids of the fast sample, per category: the first few, the data-bug ids, the noisy sample."""
    out: dict[str, list[str]] = {}
    for category in SINGLE_TURN_CATEGORIES:
        ids = [task.id for task in load_category(category)]
        wanted = set(ids[: max(SAMPLE_PER_CATEGORY, NOISY_SAMPLE.get(category, 0))])
        wanted |= {i for i in DATA_BUG_IDS if i in ids}
        out[category] = [i for i in ids if i in wanted]
    return out


def require_toolkits() -> None:
    if not SINGLE_TURN_TOOLKITS.is_dir() or not any(SINGLE_TURN_TOOLKITS.glob("simple_python_*.json")):
        missing("the BFCL single-turn toolkits are not built (make toolkits / scripts/build_toolkits.py)")


def run_single(url: str, out: Path, **settings: Any) -> RunSummary:
    """Run `gecko bfcl` in-process on `url` (16 workers, no progress bar); returns the summary."""
    config = BfclRunConfig(**settings)
    options = RunOptions(output_dir=out, gecko_url=url, workers=16, progress=False)
    return asyncio.run(run_benchmark(BfclSingleTurn(config, options), options))


def traces(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The traces of a run by task id."""
    out = {}
    for path in run_dir.glob("traces_*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            trace = json.loads(line)
            out[trace["id"]] = trace
    return out
