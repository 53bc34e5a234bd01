#!/usr/bin/env python3
"""Example rollout loop over the RL environment: BFCL multi-turn episodes on a running Gecko, played by the
ground-truth oracle (no model) or by any OpenAI-compatible model. Prints one JSON line per episode, then a
summary.

Gecko must serve the multi-turn toolkits (`make setup` builds them):

```sh
python run_gecko_server.py --schemas-dir data/bfcl/openapi/multi_turn --state-model rules &
python scripts/env_rollout.py --gecko-url http://127.0.0.1:8000 --num 20                       # oracle
python scripts/env_rollout.py --gecko-url http://127.0.0.1:8000 --num 20 --model qwen3 \\
    --base-url http://127.0.0.1:8080/v1                                                        # a model
```
"""

from __future__ import annotations

import argparse
import asyncio
import json

from benchmarks.bfcl.categories import MULTI_TURN_CATEGORIES
from benchmarks.bfcl.env_suite import episode_spec, multi_turn_tasks, oracle_actions
from inference.env import RewardConfig, openai_policy, run_episodes, scripted_policy, summarize
from inference.gecko.client import GeckoClient


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gecko-url", default="http://127.0.0.1:8000")
    parser.add_argument("--category", choices=MULTI_TURN_CATEGORIES, default="multi_turn_base")
    parser.add_argument("--num", type=int, default=20, help="episodes (the first N tasks of the category)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--model", help="an OpenAI-compatible model name (default: the ground-truth oracle)")
    parser.add_argument("--base-url", help="its endpoint (default: the openai SDK's OPENAI_BASE_URL)")
    parser.add_argument("--reward", choices=("success", "fraction"), default="success")
    parser.add_argument("--out", help="also write each episode's conversation and tools to this JSON Lines file "
                                      "(what `gecko data export` reads)")
    args = parser.parse_args()
    tasks = {t.id: t for t in multi_turn_tasks([args.category])[: args.num]}
    specs = [episode_spec(task) for task in tasks.values()]
    model = openai_policy(args.model, base_url=args.base_url) if args.model else None
    async with GeckoClient(args.gecko_url) as client:
        results = await run_episodes(
            client, specs, lambda s: model or scripted_policy(oracle_actions(tasks[str(s.id)])),
            concurrency=args.concurrency, reward=RewardConfig(mode=args.reward), record=bool(args.out))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            for result in results:  # BFCL multi-turn tasks are test tasks of BFCL: exports flag them
                handle.write(json.dumps({**result.__dict__, "group": args.category, "contaminates": "bfcl",
                                         "model": args.model or "oracle"}, ensure_ascii=False) + "\n")
    for result in results:
        print(json.dumps({k: v for k, v in result.__dict__.items() if k not in ("messages", "tools", "calls_ok")}))
    print(json.dumps({"summary": summarize(results)}))


if __name__ == "__main__":
    asyncio.run(main())
