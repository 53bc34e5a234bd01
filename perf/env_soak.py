#!/usr/bin/env python3
"""RL environment soak: many episodes back to back leave no sessions and no memory behind.

A Gecko with the test toolkits (`tests/data/openapi`, SQLite store, 2 workers, rules engines) is started; one
`GeckoClient` runs `--warmup` episodes (caches, pools and allocator arenas fill), then the measured
`--episodes` episodes in batches of `--batch` (`inference.env.run_episodes`, `--concurrency` at a time), each a
scripted policy of `--calls` valid `create_note` steps and an answer (judged), every session closed. Reports
the live sessions Gecko has at the end (must be 0), the RSS of this client process and of Gecko's workers
before and after the measured episodes (and the growth per 1,000 episodes), the client's live Python objects
before and after (after a full collection), and the SQLite store's size. Prints one JSON object.

Run: `python perf/env_soak.py [--episodes 10000] [--concurrency 64] [--calls 2]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import tempfile
import time
from pathlib import Path

import httpx

from inference.env import EpisodeSpec, run_episodes, scripted_policy, summarize
from inference.gecko.client import GeckoClient
from utils.procs import gecko_rss_kb, gecko_server, rss_kb

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"


def _store_bytes(state_dir: Path) -> int:
    return sum(path.stat().st_size for path in state_dir.rglob("*") if path.is_file())


def _snapshot(url: str) -> dict[str, int]:
    gc.collect()
    return {"client_rss_kb": rss_kb(os.getpid()), "server_rss_kb": gecko_rss_kb(url),
            "client_objects": len(gc.get_objects())}


async def _soak(url: str, args: argparse.Namespace, state_dir: Path) -> dict[str, object]:
    actions = [{"tool_calls": [{"name": "create_note", "arguments": {"title": f"n{i}", "body": "b"}}]}
               for i in range(args.calls)]

    def specs(count: int, start: int) -> list[EpisodeSpec]:
        return [EpisodeSpec(task="Create notes", toolkits=["notes"], checklist=["notes exist"], id=str(start + i),
                            max_steps=args.calls + 1) for i in range(count)]

    async with GeckoClient(url, max_connections=args.concurrency) as client:
        await run_episodes(client, specs(args.warmup, -args.warmup), lambda s: scripted_policy(actions),
                           concurrency=args.concurrency)
        before = _snapshot(url)
        store_before = _store_bytes(state_dir)
        started, done, success, untested = time.perf_counter(), 0, 0, 0
        while done < args.episodes:
            count = min(args.batch, args.episodes - done)
            results = await run_episodes(client, specs(count, done), lambda s: scripted_policy(actions),
                                         concurrency=args.concurrency)
            summary = summarize(results)
            success, untested, done = success + summary["success"], untested + summary["untested"], done + count
            del results
        seconds = time.perf_counter() - started
        after = _snapshot(url)
    per_thousand = 1000 / max(args.episodes, 1)
    return {
        "episodes": args.episodes, "success": success, "untested": untested, "seconds": round(seconds, 1),
        "episodes_per_s": round(args.episodes / seconds, 1),
        "sessions_left": httpx.get(f"{url}/health").json()["sessions"],
        "client_rss_kb": {"before": before["client_rss_kb"], "after": after["client_rss_kb"],
                          "per_1000_episodes": round((after["client_rss_kb"] - before["client_rss_kb"]) * per_thousand, 1)},
        "server_rss_kb": {"before": before["server_rss_kb"], "after": after["server_rss_kb"],
                          "per_1000_episodes": round((after["server_rss_kb"] - before["server_rss_kb"]) * per_thousand, 1)},
        "client_objects": {"before": before["client_objects"], "after": after["client_objects"]},
        "store_bytes": {"before": store_before, "after": _store_bytes(state_dir)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--batch", type=int, default=1000, help="episodes per run_episodes call")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--calls", type=int, default=2, help="valid calls per episode (then an answer)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state, gecko_server([TOOLKITS], workers=2, state_dir=Path(state)) as url:
        figures = asyncio.run(_soak(url, args, Path(state)))
    print(json.dumps({"concurrency": args.concurrency, "calls_per_episode": args.calls, **figures}, indent=2))


if __name__ == "__main__":
    main()
