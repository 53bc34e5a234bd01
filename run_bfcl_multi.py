#!/usr/bin/env python3
"""BFCL multi-turn with per-turn GATS, real execution and state sync against a running Gecko
(see benchmarks/bfcl/README.md and gats/turns.py).

    python run_gecko_server.py --schemas-dir data/bfcl/openapi/multi_turn --state-model rules &
    python run_bfcl_multi.py --all --category multi_turn_base --model scripted-oracle
    python run_bfcl_multi.py --category multi_turn_base --num-tasks 20 --model gpt-4o-mini --workers 8 --resume
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.bfcl.agents import SCRIPTED_MODELS, is_scripted
from benchmarks.bfcl.batch import DEFAULT_MAX_RETRIES, DEFAULT_WORKERS, RunReport
from benchmarks.bfcl.categories import MULTI_TURN_CATEGORIES, UnknownCategoryError
from benchmarks.bfcl.loader import TaskSelectionError
from benchmarks.bfcl.multi_batch import SUPPORTED_CATEGORIES, MultiTurnRunConfig, run_multi_turn
from benchmarks.bfcl.preflight import PreflightError
from inference.agents.noise import DEFAULT_ERROR_RATE
from utils.llm import load_env
from utils.paths import REPO_ROOT
from utils.settings import Settings

DEFAULT_OUTPUT = REPO_ROOT / "results" / "bfcl"


def build_parser(settings: Settings) -> argparse.ArgumentParser:
    """The command-line interface (defaults from the settings object)."""
    parser = argparse.ArgumentParser(description="BFCL multi-turn with per-turn GATS and real execution.")
    parser.add_argument("--category", default="multi_turn_base",
                        help=f"one of {', '.join(MULTI_TURN_CATEGORIES)}, or 'all' (default multi_turn_base)")
    pick = parser.add_mutually_exclusive_group()
    pick.add_argument("--all", action="store_true", help="every task of the category (the default)")
    pick.add_argument("--ids", help="comma-separated task ids (full, or short like 3 for one category)")
    pick.add_argument("--ids-file", type=Path, help="file with one task id per line")
    parser.add_argument("--num-tasks", type=int, help="only the first N selected tasks of each category")
    parser.add_argument("--model", required=True,
                        help="scripted-oracle | scripted-noisy (offline) | an LLM alias | "
                             "openai-compatible:<model>@<base_url>")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="tasks run concurrently")
    parser.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES,
                        help="GATS retries per turn after the first attempt; 0 = no GATS (real run unplanned)")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help=f"default {DEFAULT_OUTPUT}")
    parser.add_argument("--resume", action="store_true", help="skip ids already in the result files; append")
    parser.add_argument("--gecko-url", default=settings.gecko_url, help=f"default {settings.gecko_url} (settings)")
    parser.add_argument("--no-checklist", action="store_true", help="no dynamic checklist per turn")
    parser.add_argument("--seed", type=int, default=0, help="seed of scripted-noisy's errors")
    parser.add_argument("--error-rate", type=float, default=DEFAULT_ERROR_RATE,
                        help="probability that scripted-noisy corrupts a call")
    parser.add_argument("--max-steps", type=int, default=20, help="planner steps per run (official limit 20)")
    parser.add_argument("--temperature", type=float, default=0.0, help="planner temperature")
    parser.add_argument("--no-cache", action="store_true", help="do not use the LLM reply cache")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--debug", action="store_true", help="keep Gecko sessions, stop on a crash")
    parser.add_argument("--verbose", action="store_true", help="one line per task")
    return parser


def categories_of(name: str) -> tuple[str, ...]:
    """The categories named by `--category`.

    Raises:
        UnknownCategoryError: Not a multi-turn category of the installed data.
    """
    if name == "all":
        return SUPPORTED_CATEGORIES
    full = name if name.startswith("multi_turn_") else f"multi_turn_{name}"
    if full not in SUPPORTED_CATEGORIES:
        raise UnknownCategoryError(f"{name!r} is not a multi-turn category; choose from "
                                   f"{', '.join(SUPPORTED_CATEGORIES)} or 'all'")
    return (full,)


def config_from_args(args: argparse.Namespace, settings: Settings) -> MultiTurnRunConfig:
    """The run configuration for parsed flags."""
    ids = tuple(i.strip() for i in args.ids.split(",") if i.strip()) if args.ids else None
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    return MultiTurnRunConfig(
        categories=categories_of(args.category), model=args.model, gecko_url=args.gecko_url,
        output_dir=args.output_dir, ids=ids, ids_file=args.ids_file, num_tasks=args.num_tasks, workers=args.workers,
        max_retries=args.max_retries, resume=args.resume, seed=args.seed, error_rate=args.error_rate,
        max_steps=args.max_steps, temperature=args.temperature, generate_checklist=not args.no_checklist,
        llm_cache=None if args.no_cache else settings.state_dir / "llm_cache.db", gecko_api_key=key or None,
        debug=args.debug, verbose=args.verbose, progress=not args.no_progress,
    )


def print_report(report: RunReport) -> None:
    """The end-of-run table."""
    print(f"\n{'category':<24} {'selected':>8} {'skipped':>8} {'finished':>8} {'untested':>8} "
          f"{'run acc':>8} {'file acc':>9}")
    for c in report.categories:
        run_acc = f"{c.correct / c.finished:.4f}" if c.finished else "-"
        file_acc = f"{c.accuracy:.4f}" if c.accuracy is not None else "-"
        print(f"{c.category:<24} {c.selected:>8} {c.skipped:>8} {c.finished:>8} {c.untested + c.crashed:>8} "
              f"{run_acc:>8} {file_acc:>9}")
    print(f"\nresults: {report.results_dir}\nrun dir: {report.run_dir}")
    if any(c.untested or c.crashed for c in report.categories):
        print("some tasks are untested (infrastructure or sync failures): rerun with --resume to retry them")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 done, 1 setup error, 130 interrupted)."""
    load_env()
    settings = Settings()
    parser = build_parser(settings)
    args = parser.parse_args(argv)
    if args.model.startswith("scripted-") and not is_scripted(args.model):
        parser.error(f"unknown scripted agent {args.model!r}; choose one of {', '.join(SCRIPTED_MODELS)}")
    try:
        config = config_from_args(args, settings)
    except UnknownCategoryError as exc:
        parser.error(str(exc))
    try:
        report = asyncio.run(run_multi_turn(config))
    except PreflightError as exc:
        print(f"preflight failed: {exc}", file=sys.stderr)
        return 1
    except (TaskSelectionError, UnknownCategoryError, FileExistsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\ninterrupted: finished tasks are saved under {config.output_dir}; rerun with --resume to go on",
              file=sys.stderr)
        return 130
    print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
