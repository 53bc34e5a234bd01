#!/usr/bin/env python3
"""Serve Gecko episodes as an OpenEnv environment (`inference.env.openenv_adapter`; needs the `openenv` extra).

Any OpenEnv client (`GeckoEnvClient`, OpenEnv's generic client, TRL's OpenEnv rollouts) connects to it; each
client session is one episode on the Gecko at `--gecko-url`. `--suite` offers a ready-made task set as an
OpenEnv split (`reset(split="bfcl_multi_turn", index=12)`; Gecko must then serve its toolkits); `--toolkit`
sets the toolkits of episodes that name none.

```sh
python run_gecko_server.py --schemas-dir data/bfcl/openapi/multi_turn &            # Gecko on :8000
python scripts/openenv_serve.py --gecko-url http://127.0.0.1:8000 --suite bfcl_multi_turn --port 8001
```
"""

from __future__ import annotations

import argparse

import uvicorn

from benchmarks.registry import ENV_SUITES, load_env_suite
from inference.env import RewardConfig
from inference.env.openenv_adapter import create_openenv_app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gecko-url", default="http://127.0.0.1:8000")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--suite", action="append", choices=sorted(ENV_SUITES), default=[],
                        help="a ready-made task set to offer as an OpenEnv split (repeatable)")
    parser.add_argument("--toolkit", action="append", default=[], help="default toolkits of an episode")
    parser.add_argument("--max-steps", type=int, default=16, help="default step budget of an episode")
    parser.add_argument("--reward", choices=("success", "fraction"), default="success")
    parser.add_argument("--max-concurrent-envs", type=int, default=256)
    args = parser.parse_args()
    defaults = {"max_steps": args.max_steps, **({"toolkits": args.toolkit} if args.toolkit else {})}
    app = create_openenv_app(args.gecko_url, defaults=defaults, reward=RewardConfig(mode=args.reward),
                             suites={name: load_env_suite(name) for name in args.suite},
                             max_concurrent_envs=args.max_concurrent_envs)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
