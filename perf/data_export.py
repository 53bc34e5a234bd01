#!/usr/bin/env python3
"""`gecko data export` throughput: rows/s from an environment rollout file and, when given, from run directories.

A Gecko on the BFCL multi-turn toolkits (rules engines, 2 workers) is started; `--episodes` episodes of the BFCL
multi-turn tasks (cycling through the 800 of the four base categories) are played by the ground-truth oracle 64
at a time with their conversation recorded (`run_episodes(record=True)`), written as a rollout file, and exported
(`--allow-test-tasks`, OpenAI + DPO formats). Each `--run-dir` is exported the same way. Prints one JSON object:
per source, candidate and kept rows, seconds and rows/s of the export (reading, filtering, writing).

Run: `python perf/data_export.py [--episodes 1000] [--run-dir RUN_DIR …]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from benchmarks.bfcl.categories import MULTI_TURN_CATEGORIES
from benchmarks.bfcl.env_suite import episode_spec, multi_turn_tasks, oracle_actions
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.data_export import ExportOptions, FilterOptions, run_export
from inference.env import run_episodes, scripted_policy
from inference.gecko.client import GeckoClient
from utils.procs import gecko_server


async def _rollouts(url: str, episodes: int, out: Path) -> dict[str, object]:
    tasks = multi_turn_tasks(list(MULTI_TURN_CATEGORIES))
    picked = [tasks[i % len(tasks)] for i in range(episodes)]
    specs = [episode_spec(task).model_copy(update={"id": f"{task.id}#{i}"}) for i, task in enumerate(picked)]
    actions = {spec.id: oracle_actions(task) for spec, task in zip(specs, picked, strict=True)}
    async with GeckoClient(url, max_connections=64) as client:
        started = time.perf_counter()
        results = await run_episodes(client, specs, lambda s: scripted_policy(actions[str(s.id)]), concurrency=64,
                                     record=True)
        seconds = time.perf_counter() - started
    with out.open("w", encoding="utf-8") as handle:
        for result, task in zip(results, picked, strict=True):
            handle.write(json.dumps({**result.__dict__, "group": task.category, "contaminates": "bfcl",
                                     "model": "oracle"}) + "\n")
    return {"episodes": episodes, "rollout_seconds": round(seconds, 1),
            "untested": sum(1 for r in results if r.error is not None)}


def _export(source: Path, out: Path) -> dict[str, object]:
    options = ExportOptions(sources=[source], out=out, filters=FilterOptions(allow_test_tasks=True),
                            formats=("openai", "dpo"))
    started = time.perf_counter()
    summary = run_export(options)
    seconds = time.perf_counter() - started
    rows = summary["rows"]
    return {"source": str(source), **rows, "seconds": round(seconds, 2),
            "rows_per_s": round(rows["candidates"] / seconds, 1), "report": summary["report"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--run-dir", type=Path, action="append", default=[])
    args = parser.parse_args()
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="gecko-perf-export-") as tmp:
        root = Path(tmp)
        if args.episodes:
            rollouts = root / "rollouts.jsonl"
            with gecko_server([OPENAPI_DIR / "multi_turn"], workers=2, state_dir=root / "state",
                              extra=["--state-model", "rules"], log_path=root / "server.log") as url:
                figures["rollouts"] = asyncio.run(_rollouts(url, args.episodes, rollouts))
            figures["env_export"] = _export(rollouts, root / "env-out")
        figures["run_dirs"] = [_export(run, root / f"run-{i}") for i, run in enumerate(args.run_dir)]
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
