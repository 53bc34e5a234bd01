#!/usr/bin/env python3
"""Full BFCL single-turn sweep (7 categories, 3,435 tasks) with the scripted oracle over HTTP, GATS on.

Starts Gecko (rules engines, `--state-model none`, 2 workers) on `data/bfcl/openapi/single_turn`, runs the
benchmark on the shared runner in this process (the same code as `gecko bfcl`), and prints one JSON object:
wall time of the sweep (server start-up reported apart), tasks/s, accuracy per category, and the ids that
failed (expected: exactly the five data-bug ids). Target: under 3 minutes.

    python perf/bfcl_sweep.py [--workers 32] [--max-retries 2] [--categories simple_python,...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bfcl.benchmark import BfclSingleTurn
from benchmarks.bfcl.categories import SINGLE_TURN_CATEGORIES
from benchmarks.bfcl.run_config import BfclRunConfig
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.runner import RunOptions, run_benchmark
from utils.procs import gecko_server
from utils.settings import Settings

TARGET_S = 180.0


def _traces(run_dir: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(run_dir.glob("traces_*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]


def _rejected_by_gecko(trace: dict) -> bool:
    """Gecko rejected a call of the oracle's (correct) answer: a toolkit stricter than the ground truth."""
    return any(not call["ok"] for attempt in trace.get("attempts", []) for call in attempt["calls"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=32, help="concurrent tasks")
    parser.add_argument("--max-retries", type=int, default=2)
    parser.add_argument("--categories", default=",".join(SINGLE_TURN_CATEGORIES))
    parser.add_argument("--gecko-workers", type=int, default=2)
    args = parser.parse_args()
    categories = tuple(c for c in args.categories.split(",") if c)
    # the toolkit validation cache lives in the state dir: a fixed one makes later start-ups faster
    state_dir = Settings().state_dir / "bench-bfcl-sweep"
    state_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out, gecko_server(
        [OPENAPI_DIR / "single_turn"], workers=args.gecko_workers, state_dir=state_dir,
        extra=["--state-model", "none", "--store", f"sqlite:{Path(out) / 'sessions.db'}"], timeout=300,
    ) as url:
        startup_s = time.perf_counter() - started
        config = BfclRunConfig(categories=categories, model="scripted-oracle", max_retries=args.max_retries)
        options = RunOptions(output_dir=Path(out), gecko_url=url, workers=args.workers, progress=False)
        t0 = time.perf_counter()
        summary = asyncio.run(run_benchmark(BfclSingleTurn(config, options), options))
        wall_s = time.perf_counter() - t0
        traces = _traces(summary.run_dir)
    failures = sorted(t["id"] for t in traces if t.get("valid") is not True)
    rejected = sorted(t["id"] for t in traces if _rejected_by_gecko(t))
    tasks = summary.total.done + summary.total.untested + summary.total.errored
    print(json.dumps({
        "benchmark": "bfcl_sweep", "agent": "scripted-oracle", "max_retries": args.max_retries,
        "concurrency": args.workers, "gecko_workers": args.gecko_workers, "tasks": tasks,
        "wall_s": round(wall_s, 2), "tasks_per_s": round(tasks / wall_s, 1) if wall_s else None,
        "gecko_startup_s": round(startup_s, 2), "target_s": TARGET_S, "under_target": wall_s < TARGET_S,
        "accuracy": {name: group.score for name, group in summary.groups.items()},
        "untested": summary.total.untested + summary.total.errored, "failed_ids": failures,
        "oracle_calls_rejected_by_gecko": {"tasks": len(rejected), "examples": rejected[:10]},
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
