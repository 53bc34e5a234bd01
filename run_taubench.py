#!/usr/bin/env python3
"""Run tau2-bench airline or retail in-repo, with or without GATS hybrid mode.

    python run_taubench.py --domain airline --agent-llm <alias> --user-llm <alias> [--gecko-url URL]
    python run_taubench.py --domain airline --num-tasks 5                      # offline: scripted oracle + user
    python run_taubench.py --domain airline --resume results/taubench/<run>    # rerun untested, finish the rest

`--gecko-url auto` (the default) starts a local Gecko on the mock toolkits with the offline rules engines
(fine for scripted runs; for LLM runs point it at a Gecko configured with LLM models). Outputs
`summary.json` and `results.json` under `--output-dir`/<timestamp>_<domain>_<models>_<mode>/.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks.taubench.batch import run_batch
from benchmarks.taubench.run_config import AUTO_GECKO, RESULTS_ROOT, SCRIPTED_ORACLE, SCRIPTED_USER, RunConfig
from benchmarks.taubench.run_output import SUMMARY_FILE
from benchmarks.taubench.tool_defs import MOCK_DIR
from utils.procs import gecko_server


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--domain", required=True, choices=["airline", "retail"])
    p.add_argument("--task-ids", nargs="+", default=None, help="task ids (space or comma separated)")
    p.add_argument("--num-tasks", type=int, default=None)
    p.add_argument("--agent-llm", default=SCRIPTED_ORACLE, help="model alias, or scripted-oracle / scripted-noop")
    p.add_argument("--user-llm", default=SCRIPTED_USER, help="model alias, or scripted")
    p.add_argument("--judge-llm", default=None, help="NL-assertion judge (default: the agent's model)")
    p.add_argument("--num-trials", type=int, default=1)
    p.add_argument("--seed", type=int, default=300, help="trial k uses seed+k")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--gats-retries", type=int, default=2)
    p.add_argument("--gats-mode", choices=["none", "hybrid"], default="hybrid")
    p.add_argument("--gecko-url", default=AUTO_GECKO, help="Gecko base URL, or 'auto' (local, rules engines)")
    p.add_argument("--agent-timeout", type=float, default=360.0, help="seconds per agent reply")
    p.add_argument("--task-set", choices=["v1", "v0"], default="v1")
    p.add_argument("--split", choices=["base", "train", "test"], default="base")
    p.add_argument("--max-steps", type=int, default=200)
    p.add_argument("--output-dir", type=Path, default=RESULTS_ROOT)
    p.add_argument("--resume", type=Path, default=None, help="an earlier run directory to complete")
    p.add_argument("--llm-cache", type=Path, default=None, help="SQLite reply cache of the LLM client")
    p.add_argument("--debug", action="store_true")
    return p.parse_args(argv)


def config_from(args: argparse.Namespace) -> RunConfig:
    """The `RunConfig` of parsed arguments."""
    ids = tuple(i for raw in args.task_ids for i in raw.split(",") if i) if args.task_ids else None
    return RunConfig(
        domain=args.domain, agent_llm=args.agent_llm, user_llm=args.user_llm, judge_llm=args.judge_llm,
        task_set=args.task_set, split=args.split, task_ids=ids, num_tasks=args.num_tasks,
        num_trials=args.num_trials, seed=args.seed, workers=args.workers, gats_mode=args.gats_mode,
        gats_retries=args.gats_retries, gecko_url=args.gecko_url, agent_timeout=args.agent_timeout,
        max_steps=args.max_steps, output_dir=args.output_dir, resume=args.resume, debug=args.debug,
        llm_cache=args.llm_cache,
    )


@contextlib.contextmanager
def gecko_for(config: RunConfig) -> Iterator[str]:
    """The Gecko URL to use: the given one, or a local server started for the run (`auto`)."""
    if config.gats_mode != "hybrid" or config.gecko_url != AUTO_GECKO:
        yield config.gecko_url
        return
    with tempfile.TemporaryDirectory(prefix="gecko-taubench-") as state, \
            gecko_server([MOCK_DIR], workers=1, state_dir=Path(state), extra=["--state-model", "none"]) as url:
        yield url


def main(argv: Sequence[str] | None = None) -> int:
    """Run, then print the run directory and its metrics."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING)
    config = config_from(args)
    with gecko_for(config) as url:
        config = dataclasses.replace(config, gecko_url=url)
        run_dir = asyncio.run(run_batch(config))
    summary = json.loads((run_dir / SUMMARY_FILE).read_text())
    print(json.dumps({"run_dir": str(run_dir), "metrics": summary["metrics"], "untested": summary["untested"]},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
