#!/usr/bin/env python3
"""RL environment throughput: env steps/s with 64 concurrent episodes over a 2-worker Gecko (rules engines).

A Gecko with the test toolkits (`tests/data/openapi`, SQLite store, 2 workers) is started; `--episodes`
episodes of the notes task run 64 at a time (`inference.env.run_episodes`), each a scripted policy of
`--calls` valid `create_note` steps and a final answer. Reports steps/s (every `step`, calls and answers,
over the wall time including reset and close), episodes/s, the live sessions Gecko reports after the run
(must be 0) and the server's RSS growth per open episode (sessions kept open at the end of a second batch).
Prints one JSON object.

Run: `python perf/env_steps.py [--episodes 2000] [--concurrency 64] [--calls 4]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import httpx

from inference.env import CatalogCache, EpisodeSpec, GeckoEpisode, run_episodes, scripted_policy, summarize
from inference.gecko.client import GeckoClient
from utils.procs import gecko_rss_kb, gecko_server

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"


async def _run(url: str, episodes: int, concurrency: int, calls: int) -> dict[str, object]:
    actions = [{"tool_calls": [{"name": "create_note", "arguments": {"title": f"n{i}", "body": "b"}}]}
               for i in range(calls)]
    specs = [EpisodeSpec(task="Create notes", toolkits=["notes"], checklist=["notes exist"], id=str(i),
                         max_steps=calls + 1) for i in range(episodes)]
    async with GeckoClient(url, max_connections=concurrency) as client:
        started = time.perf_counter()
        results = await run_episodes(client, specs, lambda s: scripted_policy(actions), concurrency=concurrency)
        seconds = time.perf_counter() - started
        summary = dict(summarize(results))
        before = gecko_rss_kb(url)
        catalogs = CatalogCache()
        open_episodes = [GeckoEpisode(client, catalogs=catalogs) for _ in range(concurrency * 4)]
        for episode in open_episodes:
            await episode.reset(specs[0])
            await episode.step(actions[0])
        grown = gecko_rss_kb(url) - before
        open_sessions = httpx.get(f"{url}/health").json()["sessions"]
        for episode in open_episodes:
            await episode.close()
    return {**summary, "seconds": round(seconds, 2), "steps_per_s": round(summary["steps"] / seconds, 1),
            "episodes_per_s": round(episodes / seconds, 1),
            "server_rss_kb_per_open_episode": round(grown / len(open_episodes), 1),
            "sessions_while_open": open_sessions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state, gecko_server([TOOLKITS], workers=2, state_dir=Path(state)) as url:
        figures = asyncio.run(_run(url, args.episodes, args.concurrency, args.calls))
        figures["sessions_left"] = httpx.get(f"{url}/health").json()["sessions"]
    print(json.dumps({"concurrency": args.concurrency, "calls_per_episode": args.calls, **figures}, indent=2))


if __name__ == "__main__":
    main()
