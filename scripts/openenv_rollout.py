#!/usr/bin/env python3
"""Example rollout loop over OpenEnv: episodes of a ready-made suite on a Gecko OpenEnv server
(`scripts/openenv_serve.py`), each through its own `GeckoEnvClient` session (OpenEnv's WebSocket client, as
TRL's OpenEnv rollouts use it), played by the suite's oracle (no model) or by any OpenAI-compatible model.
Prints one JSON line per episode, then a summary.

```sh
python run_gecko_server.py --schemas-dir data/bfcl/openapi/multi_turn &
python scripts/openenv_serve.py --gecko-url http://127.0.0.1:8000 --suite bfcl_multi_turn --port 8001 &
python scripts/openenv_rollout.py --url http://127.0.0.1:8001 --split bfcl_multi_turn --num 20            # oracle
python scripts/openenv_rollout.py --url http://127.0.0.1:8001 --split bfcl_multi_turn --num 20 \\
    --model qwen3 --base-url http://127.0.0.1:8080/v1                                                      # a model
```
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Mapping
from typing import Any

from benchmarks.bfcl.env_suite import multi_turn_tasks
from benchmarks.bfcl.env_suite import oracle_actions as bfcl_oracle
from benchmarks.taubench.env_suite import DOMAINS, tau2_tasks
from benchmarks.taubench.env_suite import oracle_actions as tau2_oracle
from inference.env import openai_policy, scripted_policy
from inference.env.openenv_adapter import GeckoAction, GeckoEnvClient


def oracle_scripts(split: str) -> Mapping[str, list[dict[str, Any]]]:
    """Episode id → the suite's ground truth as actions."""
    if split == "bfcl_multi_turn":
        return {task.id: bfcl_oracle(task) for task in multi_turn_tasks()}
    return {f"{domain}_{task.id}": tau2_oracle(task) for domain in DOMAINS for task in tau2_tasks(domain)}


async def episode(url: str, split: str, index: int, args: argparse.Namespace,
                  scripts: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    async with GeckoEnvClient(base_url=url, message_timeout_s=600) as env:
        result = await env.reset(split=split, index=index)
        episode_id = str((await env.state()).episode_id)
        policy = (openai_policy(args.model, base_url=args.base_url) if args.model
                  else scripted_policy(scripts.get(episode_id, [])))
        total, steps = 0.0, 0
        while not result.done:
            action = await policy(result.observation.model_dump())
            result = await env.step(GeckoAction(**{k: action[k] for k in ("tool_calls", "answer") if k in action}))
            total, steps = total + float(result.reward or 0.0), steps + 1
        judge = result.observation.metadata.get("judge") or {}
        return {"id": episode_id, "reward": round(total, 4), "steps": steps, "success": judge.get("success"),
                "truncated": result.observation.metadata.get("truncated")}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8001", help="the Gecko OpenEnv server")
    parser.add_argument("--split", choices=("bfcl_multi_turn", "tau2"), default="bfcl_multi_turn")
    parser.add_argument("--num", type=int, default=20, help="episodes (the first N tasks of the split)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--model", help="an OpenAI-compatible model name (default: the suite's oracle)")
    parser.add_argument("--base-url", help="its endpoint (default: the openai SDK's OPENAI_BASE_URL)")
    args = parser.parse_args()
    scripts = {} if args.model else oracle_scripts(args.split)
    gate = asyncio.Semaphore(args.concurrency)

    async def gated(index: int) -> dict[str, Any]:
        async with gate:
            return await episode(args.url, args.split, index, args, scripts)

    results = await asyncio.gather(*(gated(i) for i in range(args.num)))
    for line in results:
        print(json.dumps(line))
    print(json.dumps({"summary": {"episodes": len(results), "success": sum(1 for r in results if r["success"]),
                                  "mean_reward": round(sum(r["reward"] for r in results) / max(len(results), 1), 4)}}))


if __name__ == "__main__":
    asyncio.run(main())
