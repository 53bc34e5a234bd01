#!/usr/bin/env python3
"""Robustness figures of the shipped fault profiles, offline: BFCL multi-turn base and tau2 airline with the
scripted oracle, each task clean and under each profile (`--faults`), on one local Gecko per benchmark.

Per benchmark and profile: accuracy with and without faults (over the tasks done in both arms), Recovery Rate,
Recovery Rate after an injected error, Flexibility, Schema Compliance, give-up rate, injections by kind, extra
calls per task, and whether a second run of the same profile met the same faults at the same calls (`replay`,
checked on the first profile). The scripted oracle never retries a refused call: the drop measures what the faults
cost an agent that does not recover, the rates what that agent did next. Prints one JSON object.

Run: `python perf/robustness_profiles.py [--bfcl-tasks 20] [--tau2-tasks 20] [--profiles flaky-network,…]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bfcl.benchmark import BfclMultiTurn
from benchmarks.bfcl.run_config import MultiTurnRunConfig
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.runner import RunOptions, RunSummary, read_ledger, run_benchmark
from benchmarks.taubench.benchmark import Tau2Benchmark
from benchmarks.taubench.mock_toolkits import MOCK_DIR
from benchmarks.taubench.run_config import Tau2RunConfig
from utils.faults import load_policy, profile_names
from utils.procs import gecko_server


def _figures(summary: RunSummary, seconds: float) -> dict[str, Any]:
    block = summary.robustness or {}
    rates = block.get("metrics", {}).get("faults", {}).get("all", {})
    return {"tasks": block.get("tasks"), "accuracy": block.get("accuracy"),
            "recovery_rate": rates.get("recovery_rate"), "recovery_rate_injected": rates.get("recovery_rate_injected"),
            "flexibility": rates.get("flexibility"), "schema_compliance": rates.get("schema_compliance"),
            "give_up_rate": rates.get("give_up_rate"), "injected": block.get("injected"),
            "extra_calls_per_task": block.get("extra", {}).get("calls_per_task", {}).get("extra"),
            "wall_s": round(seconds, 2)}


def _injections(run_dir: Path) -> list[Any]:
    """Every fault-arm task's robustness counts, by key (equal counts and kinds per task: the same faults)."""
    return sorted((e.key, e.info.get("robustness")) for e in read_ledger(run_dir / "tasks.jsonl")
                  if e.key.endswith("~faults"))


async def _timed(benchmark: Any, config: Any, url: str, out: Path) -> tuple[RunSummary, float]:
    options = RunOptions(output_dir=out, gecko_url=url, workers=4, progress=False)
    started = time.perf_counter()
    summary = await run_benchmark(benchmark(config, options), options)
    return summary, time.perf_counter() - started


async def _bfcl(url: str, out: Path, profile: str, tasks: int) -> tuple[RunSummary, float]:
    config = MultiTurnRunConfig(model="scripted-oracle", num_tasks=tasks, faults=load_policy(profile).public())
    return await _timed(BfclMultiTurn, config, url, out)


async def _tau2(url: str, out: Path, profile: str, tasks: int) -> tuple[RunSummary, float]:
    config = Tau2RunConfig(domain="airline", num_tasks=tasks, faults=load_policy(profile).public())
    return await _timed(Tau2Benchmark, config, url, out)


def _bench(name: str, toolkits: Path, extra: list[str], run: Any, profiles: list[str], tasks: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, gecko_server([toolkits], workers=2, state_dir=Path(tmp) / "state",
                                                            extra=extra) as url:
        for index, profile in enumerate(profiles):
            summary, seconds = asyncio.run(run(url, Path(tmp) / profile, profile, tasks))
            out[profile] = _figures(summary, seconds)
            if index == 0:
                again, _ = asyncio.run(run(url, Path(tmp) / f"{profile}-replay", profile, tasks))
                out[profile]["replay_identical"] = _injections(summary.run_dir) == _injections(again.run_dir)
    return {"benchmark": name, "tasks": tasks, "profiles": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bfcl-tasks", type=int, default=20)
    parser.add_argument("--tau2-tasks", type=int, default=20)
    parser.add_argument("--profiles", default=",".join(profile_names()))
    args = parser.parse_args()
    profiles = [p for p in args.profiles.split(",") if p]
    result = {"benchmark": "robustness_profiles", "agent": "scripted-oracle", "runs": [
        _bench("bfcl-multi multi_turn_base", OPENAPI_DIR / "multi_turn", ["--state-model", "rules"], _bfcl, profiles,
               args.bfcl_tasks),
        _bench("tau2 airline (hybrid GATS)", MOCK_DIR, ["--state-model", "none"], _tau2, profiles, args.tau2_tasks),
    ]}
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
