#!/usr/bin/env python3
"""Throughput and latency of the rules path: 2 Gecko workers, load from a separate process.

Scenarios, each for --seconds at --concurrency connections (one session per connection):
(a) invalid calls (422), (b) valid read calls, (c) valid write calls (state update).
Prints one JSON object. Run: `python bench/rule_path.py [--seconds 15] [--concurrency 64]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from utils.procs import gecko_server  # noqa: E402

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"
SCENARIOS = {
    "invalid_422": ("/notes/create_note", {"body": 1, "priority": 0, "nope": True}, 422),
    "valid_read": ("/notes/get_note", {"note_id": "N-{i}"}, 200),
    "valid_write": ("/notes/create_note", {"title": "note {i}", "body": "text", "priority": 3}, 200),
}


async def _drive(url: str, scenario: str, seconds: float, concurrency: int) -> dict:
    import aiohttp

    path, template, expected = SCENARIOS[scenario]
    latencies: list[float] = []
    errors = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(base_url=url, connector=connector) as http:
        sessions = []
        for _ in range(concurrency):
            async with http.get("/session-id") as r:
                sessions.append((await r.json())["session_id"])
        deadline = time.perf_counter() + seconds

        async def worker(index: int) -> None:
            nonlocal errors
            headers = {"X-Session-ID": sessions[index]}
            i = 0
            while time.perf_counter() < deadline:
                body = json.loads(json.dumps(template).replace("{i}", f"{index}-{i}"))
                start = time.perf_counter()
                async with http.post(path, json=body, headers=headers) as r:
                    await r.read()
                    if r.status != expected:
                        errors += 1
                latencies.append(time.perf_counter() - start)
                i += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [latencies[0]] * 99
    return {"requests": len(latencies), "errors": errors, "req_per_s": round(len(latencies) / elapsed, 1),
            "p50_ms": round(q[49] * 1000, 2), "p99_ms": round(q[98] * 1000, 2)}


def _run_scenario(url: str, scenario: str, seconds: float, concurrency: int, out: mp.Queue) -> None:
    out.put(asyncio.run(_drive(url, scenario, seconds, concurrency)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    results: dict = {"bench": "rule_path", "workers": args.workers, "concurrency": args.concurrency,
                     "seconds": args.seconds, "store": "sqlite"}
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as state, gecko_server([TOOLKITS], workers=args.workers,
                                                              state_dir=Path(state)) as url:
        for scenario in SCENARIOS:
            queue: mp.Queue = ctx.Queue()
            proc = ctx.Process(target=_run_scenario, args=(url, scenario, args.seconds, args.concurrency, queue))
            proc.start()
            results[scenario] = queue.get(timeout=args.seconds + 120)
            proc.join()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
