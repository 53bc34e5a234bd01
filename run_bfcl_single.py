#!/usr/bin/env python3
"""BFCL single-turn with GATS against a running Gecko (see benchmarks/bfcl/README.md).

    python run_gecko_server.py --schemas-dir data/bfcl/openapi/single_turn --state-model none &
    python run_bfcl_single.py --category simple_python --num-tasks 20 --model scripted-noisy --max-retries 2
    python run_bfcl_single.py --category all --all --model gpt-4o-mini --workers 16 --resume
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.bfcl.agents import SCRIPTED_MODELS, is_scripted
from benchmarks.bfcl.batch import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_WORKERS,
    RunReport,
    SingleTurnRunConfig,
    run_single_turn,
)
from benchmarks.bfcl.categories import SINGLE_TURN_CATEGORIES, UnknownCategoryError
from benchmarks.bfcl.loader import TaskSelectionError
from benchmarks.bfcl.preflight import PreflightError
from inference.agents.noise import DEFAULT_ERROR_RATE
from utils.llm import load_env
from utils.paths import REPO_ROOT
from utils.settings import Settings

DEFAULT_OUTPUT = REPO_ROOT / "results" / "bfcl"


def build_parser(settings: Settings) -> argparse.ArgumentParser:
    """The command-line interface (defaults from the settings object)."""
    parser = argparse.ArgumentParser(description="BFCL single-turn with GATS on Gecko.")
    parser.add_argument("--category", required=True, choices=[*SINGLE_TURN_CATEGORIES, "all"],
                        help="one single-turn category, or 'all' (one result file per category)")
    pick = parser.add_mutually_exclusive_group()
    pick.add_argument("--all", action="store_true", help="every task of the category (the default)")
    pick.add_argument("--ids", help="comma-separated task ids (full, or short like 3 / 3-1-0 for one category)")
    pick.add_argument("--ids-file", type=Path, help="file with one task id per line")
    parser.add_argument("--num-tasks", type=int, help="only the first N selected tasks of each category")
    parser.add_argument("--model", required=True,
                        help="scripted-oracle | scripted-noisy (offline, no model) | an LLM alias | "
                             "openai-compatible:<model>@<base_url>")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="tasks run concurrently")
    parser.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES,
                        help="GATS retries after the first attempt; 0 = baseline without GATS")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help=f"default {DEFAULT_OUTPUT}")
    parser.add_argument("--resume", action="store_true", help="skip ids already in the result files; append")
    parser.add_argument("--gecko-url", default=settings.gecko_url, help=f"default {settings.gecko_url} (settings)")
    parser.add_argument("--checklist", action="store_true", help="generate a checklist per task (judge model)")
    parser.add_argument("--seed", type=int, default=0, help="seed of scripted-noisy's errors")
    parser.add_argument("--error-rate", type=float, default=DEFAULT_ERROR_RATE,
                        help="probability that scripted-noisy corrupts a call")
    parser.add_argument("--max-steps", type=int, default=10, help="planner steps per attempt")
    parser.add_argument("--temperature", type=float, default=0.0, help="planner temperature")
    parser.add_argument("--no-cache", action="store_true", help="do not use the LLM reply cache")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--debug", action="store_true", help="keep Gecko sessions, DEBUG log, stop on a crash")
    parser.add_argument("--verbose", action="store_true", help="one line per task")
    return parser


def config_from_args(args: argparse.Namespace, settings: Settings) -> SingleTurnRunConfig:
    """The run configuration for parsed flags."""
    categories = SINGLE_TURN_CATEGORIES if args.category == "all" else (args.category,)
    ids = tuple(i.strip() for i in args.ids.split(",") if i.strip()) if args.ids else None
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    return SingleTurnRunConfig(
        categories=tuple(categories), model=args.model, gecko_url=args.gecko_url, output_dir=args.output_dir,
        ids=ids, ids_file=args.ids_file, num_tasks=args.num_tasks, workers=args.workers,
        max_retries=args.max_retries, resume=args.resume, seed=args.seed, error_rate=args.error_rate,
        max_steps=args.max_steps, temperature=args.temperature, generate_checklist=args.checklist,
        llm_cache=None if args.no_cache else settings.state_dir / "llm_cache.db", gecko_api_key=key or None,
        debug=args.debug, verbose=args.verbose, progress=not args.no_progress,
    )


def print_report(report: RunReport) -> None:
    """The end-of-run table."""
    print(f"\n{'category':<18} {'selected':>8} {'skipped':>8} {'finished':>8} {'untested':>8} "
          f"{'run acc':>8} {'file acc':>9} {'recovered':>9}")
    for c in report.categories:
        run_acc = f"{c.correct / c.finished:.4f}" if c.finished else "-"
        file_acc = f"{c.accuracy:.4f}" if c.accuracy is not None else "-"
        print(f"{c.category:<18} {c.selected:>8} {c.skipped:>8} {c.finished:>8} {c.untested + c.crashed:>8} "
              f"{run_acc:>8} {file_acc:>9} {c.recovered:>9}")
    print(f"\nresults: {report.results_dir}\nrun dir: {report.run_dir}")
    print(f"score:   python -m benchmarks.bfcl.evaluate --result-dir {report.results_dir} --test-category all")
    if any(c.untested or c.crashed for c in report.categories):
        print("some tasks are untested (infrastructure failures): rerun with --resume to retry them")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 done, 1 setup error, 130 interrupted)."""
    load_env()
    settings = Settings()
    parser = build_parser(settings)
    args = parser.parse_args(argv)
    if args.model.startswith("scripted-") and not is_scripted(args.model):
        parser.error(f"unknown scripted agent {args.model!r}; choose one of {', '.join(SCRIPTED_MODELS)}")
    config = config_from_args(args, settings)
    try:
        report = asyncio.run(run_single_turn(config))
    except PreflightError as exc:
        print(f"preflight failed: {exc}", file=sys.stderr)
        return 1
    except (TaskSelectionError, UnknownCategoryError, FileExistsError) as exc:
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
