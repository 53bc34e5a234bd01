"""`gecko openworld tasks`: generate a validated open-world task set from a pool (tasks.jsonl + taskset.json)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.openworld.tasks.catalog import PoolCatalog
from benchmarks.openworld.tasks.generate import Engine, TaskSetResult, make_taskset, write_taskset
from benchmarks.openworld.tasks.template import TemplateEngine
from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoError
from utils.llm.errors import LLMError
from utils.paths import DATA_DIR
from utils.procs import gecko_server

log = logging.getLogger("benchmarks.openworld.tasks")


def build_parser() -> argparse.ArgumentParser:
    """`gecko openworld tasks` flags."""
    parser = argparse.ArgumentParser(prog="gecko openworld", description="Open-world tasks over the tool pool.")
    commands = parser.add_subparsers(dest="command", required=True)
    tasks = commands.add_parser("tasks", help="generate a validated task set from the pool")
    tasks.add_argument("--pool", type=Path, default=DATA_DIR / "pool", help="pool directory (default: data/pool)")
    tasks.add_argument("--out", type=Path, required=True, help="task-set directory (tasks.jsonl, taskset.json)")
    tasks.add_argument("--count", type=int, default=20, help="candidates to draw (default 20)")
    tasks.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    tasks.add_argument("--engine", choices=("template", "llm"), default="template",
                       help="template: deterministic I/O chains (default); llm: a model writes the tasks")
    tasks.add_argument("--model", help="the llm engine's model (an alias or openai-compatible:NAME@URL)")
    tasks.add_argument("--gecko", help="a running Gecko serving the pool (default: start one on --pool)")
    tasks.add_argument("--workers", type=int, default=2, help="workers of the Gecko started here (default 2)")
    return parser


def _engine(args: argparse.Namespace, catalog: PoolCatalog) -> Engine:
    if args.engine == "llm":
        from benchmarks.openworld.tasks.llm import LLMEngine

        if not args.model:
            raise ValueError("--engine llm needs --model")
        return LLMEngine(catalog, args.seed, args.model)
    return TemplateEngine(catalog, args.seed)


async def _run(args: argparse.Namespace, catalog: PoolCatalog, url: str) -> TaskSetResult:
    engine = _engine(args, catalog)
    async with GeckoClient(url) as client:
        try:
            return await make_taskset(engine, catalog, client, args.count, seed=args.seed,
                                      model=args.model if args.engine == "llm" else None)
        finally:
            close = getattr(engine, "aclose", None)
            if close is not None:
                await close()


def generate(args: argparse.Namespace) -> TaskSetResult:
    """Run the engine against `--gecko`, or against a Gecko started on the pool for the run."""
    catalog = PoolCatalog.open(args.pool)
    if args.gecko:
        return asyncio.run(_run(args, catalog, args.gecko))
    with tempfile.TemporaryDirectory(prefix="gecko-tasks-") as state, \
            gecko_server([catalog.toolkit_dir], workers=args.workers, state_dir=Path(state), timeout=300) as url:
        return asyncio.run(_run(args, catalog, url))


def main(argv: Sequence[str] | None = None) -> int:
    """Run `gecko openworld …`; 0 written, 1 failed, 2 bad arguments."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="gecko openworld: %(message)s")
    log.setLevel(logging.INFO)  # our own lines (drops with examples); not httpx's line per request
    if args.count < 1:
        print("gecko openworld: error: --count must be at least 1", file=sys.stderr)
        return 2
    try:
        result = generate(args)
    except (OSError, ValueError, RuntimeError, GeckoError, LLMError) as exc:
        print(f"gecko openworld: error: {exc}", file=sys.stderr)
        return 1
    write_taskset(args.out, result)
    for reason, examples in result.reasons.items():
        log.info("dropped %s, e.g. %s", reason, "; ".join(examples[:2]))
    print(json.dumps({**result.summary(), "out": str(args.out)}, indent=1))
    return 0
