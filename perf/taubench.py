#!/usr/bin/env python3
"""tau2 airline with the scripted agents (oracle + scripted user): wall time and Gecko/LLM calls per task,
GATS hybrid on and off.

Starts Gecko (rules engines, `--state-model none`, 1 worker) on the tau2 mock toolkits, runs the batch runner
of `run_taubench.py` in this process on every airline task (v1 by default) once with `--gats-mode none` and
once with `hybrid`, counting every HTTP request sent to Gecko, and prints one JSON object.

    python perf/taubench.py [--workers 4] [--num-tasks 50] [--task-set v1] [--gats-retries 2]
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

import httpx

from benchmarks.runner import RunOptions, run_benchmark
from benchmarks.taubench.benchmark import Tau2Benchmark
from benchmarks.taubench.mock_toolkits import MOCK_DIR
from benchmarks.taubench.run_config import Tau2RunConfig
from inference.gecko import GeckoClient
from utils.procs import gecko_server


class CountingTransport(httpx.AsyncBaseTransport):
    """Counts requests per path kind on their way to Gecko."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=64))
        self.counts: dict[str, int] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        parts = request.url.path.strip("/").split("/")
        key = parts[-1] if parts[0] == "sessions" and len(parts) > 2 else (
            "tool_call" if parts[0] in ("airline", "retail") else parts[0] or "root")
        key = f"{request.method} {key}"
        self.counts[key] = self.counts.get(key, 0) + 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _measure(config: Tau2RunConfig, options: RunOptions) -> dict[str, Any]:
    transport = CountingTransport()
    async with GeckoClient(options.gecko_url, transport=transport) as gecko:
        started = time.perf_counter()
        result = await run_benchmark(Tau2Benchmark(config, options), options, gecko=gecko)
        wall = time.perf_counter() - started
    run_dir = result.run_dir
    summary = json.loads((run_dir / "summary.json").read_text())
    rows = summary["tasks"]
    n = len(rows)
    gats = [r["gats"] for r in rows if r.get("gats")]
    llm = sum(sum((r.get("llm_calls") or {}).values()) for r in rows)
    gecko_calls = sum(transport.counts.values()) - transport.counts.get("GET health", 0)
    return {
        "gats_mode": config.gats_mode, "tasks": n, "wall_s": round(wall, 2), "wall_s_per_task": round(wall / n, 4),
        "avg_reward": summary["evaluation"]["avg_reward"], "untested": len(summary["untested"]),
        "gecko_calls_per_task": round(gecko_calls / n, 2), "gecko_calls_by_kind": dict(sorted(transport.counts.items())),
        "llm_calls_per_task": llm / n,
        "gats_attempts_per_task": round(sum(g["attempts"] for g in gats) / n, 2) if gats else 0,
        "real_reads_per_task": round(sum(g["real_reads"] for g in gats) / n, 2) if gats else 0,
        "simulated_calls_per_task": round(sum(g["simulated_calls"] for g in gats) / n, 2) if gats else 0,
        "gats_latency_s_per_task": round(sum(g["latency_s"] for g in gats) / n, 4) if gats else 0,
        "mean_task_duration_s": round(sum(r["duration_s"] for r in rows) / n, 4),
        "run_dir": str(run_dir),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--num-tasks", type=int, default=None)
    parser.add_argument("--task-set", choices=["v1", "v0"], default="v1")
    parser.add_argument("--gats-retries", type=int, default=2)
    args = parser.parse_args()
    out: dict[str, Any] = {"domain": "airline", "task_set": args.task_set, "workers": args.workers,
                           "agent": "scripted-oracle", "user": "scripted", "gecko": "rules, state-model none, 1 worker"}
    with tempfile.TemporaryDirectory(prefix="bench-taubench-") as tmp:
        started = time.perf_counter()
        with gecko_server([MOCK_DIR], workers=1, state_dir=Path(tmp) / "state",
                          extra=["--state-model", "none"]) as url:
            out["gecko_startup_s"] = round(time.perf_counter() - started, 2)
            for mode in ("none", "hybrid"):
                config = Tau2RunConfig(domain="airline", task_set=args.task_set, num_tasks=args.num_tasks,
                                       gats_mode=mode, gats_retries=args.gats_retries)
                options = RunOptions(output_dir=Path(tmp) / "results", gecko_url=url, workers=args.workers,
                                     progress=False)
                out[mode] = asyncio.run(_measure(config, options))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
