"""The command line of every benchmark (`gecko <benchmark> …`): the shared argument groups, and the one place
that turns a run into console output and an exit code.

```
build_parser(command) = the benchmark's own flags (command.add_arguments)
                      + selection (--ids, --ids-file, --num-tasks) + run (--output-dir, --resume, --workers, …)
                      + Gecko (--gecko-url, --gecko-api-key-file) + LLM cache (--no-cache, --llm-cache)
run_command(command, argv) → options → command.from_args → run_benchmark → table → exit code (summary.EXIT_*)
```
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import ValidationError

from benchmarks.runner.batch import RunInterrupted, rescore, run_benchmark
from benchmarks.runner.errors import PreflightError, RunError
from benchmarks.runner.options import AUTO_GECKO, RunOptions
from benchmarks.runner.protocol import BenchmarkCommand
from benchmarks.runner.rundir import RunDirectory
from benchmarks.runner.selection import read_ids_file, split_ids
from benchmarks.runner.summary import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, format_table
from inference.agents.backends import AGENT_BACKENDS, DEFAULT_AGENT_BACKEND
from utils.llm import load_env
from utils.paths import REPO_ROOT
from utils.settings import Settings, read_secret_file
from utils.settings_cli import RefuseSecret

RESULTS_ROOT = REPO_ROOT / "results"
"""Default parent of every benchmark's output directory (`results/<benchmark>`)."""


def add_model_argument(parser: argparse.ArgumentParser, *flags: str, default: str | None = None,
                       help_text: str = "") -> None:
    """`--model` (with extra spellings in `flags`): required unless a default is given."""
    parser.add_argument("--model", *flags, dest="model", required=default is None, default=default,
                        help=help_text or "scripted-* (offline) | an LLM alias | openai-compatible:<model>@<base_url>")


def add_agent_backend_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--agent-backend planner|camel`: what drives an LLM model as a tool-calling agent (`inference.agents.backends`)."""
    parser.add_argument("--agent-backend", choices=AGENT_BACKENDS, default=DEFAULT_AGENT_BACKEND,
                        help="what drives the model as a tool-calling agent: planner (ours, default) or camel "
                             "(a CAMEL ChatAgent; needs the [camel] extra); scripted agents need neither")


def add_selection_arguments(parser: argparse.ArgumentParser, *, ids_help: str) -> None:
    """`--all | --ids … | --ids-file F` and `--num-tasks N`."""
    group = parser.add_argument_group("task selection")
    pick = group.add_mutually_exclusive_group()
    pick.add_argument("--all", action="store_true", help="every task (the default)")
    pick.add_argument("--ids", "--task-ids", nargs="+", metavar="ID", help=ids_help)
    pick.add_argument("--ids-file", type=Path, help="file with one task id per line (# comments allowed)")
    group.add_argument("--num-tasks", type=int, help="only the first N selected tasks (of each group)")


def selected_ids(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The ids given with `--ids` or `--ids-file`; None for every task.

    Raises:
        ValueError: The ids file cannot be read.
    """
    if args.ids_file is not None:
        return tuple(read_ids_file(args.ids_file))
    return split_ids(args.ids) if args.ids else None


def _add_run_arguments(parser: argparse.ArgumentParser, command: BenchmarkCommand, settings: Settings) -> None:
    default_output = RESULTS_ROOT / command.name
    run = parser.add_argument_group("run")
    run.add_argument("--output-dir", type=Path, default=default_output,
                     help=f"new run directories go under it (default {default_output})")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR",
                     help="continue this run directory in place: skip its done tasks, run the others")
    run.add_argument("--workers", type=int, default=command.default_workers, help="tasks run concurrently")
    run.add_argument("--stop-after-untested", type=int, default=0, metavar="N",
                     help="stop when N tasks in a row are untested (infrastructure down); 0 = never (default)")
    run.add_argument("--debug", action="store_true", help="keep Gecko sessions, log at DEBUG, stop on a crash")
    run.add_argument("--verbose", action="store_true", help="one line per task")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    gecko = parser.add_argument_group("Gecko")
    url = command.default_gecko_url or settings.gecko_url
    gecko.add_argument("--gecko-url", default=url,
                       help=f"Gecko's base URL, or '{AUTO_GECKO}' to start one for the run (default {url})")
    gecko.add_argument("--gecko-api-key-file", type=Path, default=None, metavar="PATH",
                       help="file whose first line is the key of a Gecko that requires one (default: GECKO_API_KEY)")
    gecko.add_argument("--gecko-api-key", dest="api_key", action=RefuseSecret, help=argparse.SUPPRESS)
    llm = parser.add_argument_group("LLM reply cache")
    cache = llm.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", action="store_true", help="do not use the LLM reply cache")
    cache.add_argument("--llm-cache", type=Path, help="SQLite file of the cache (default: <state dir>/llm_cache.db)")


def build_parser(command: BenchmarkCommand, settings: Settings, prog: str | None = None,
                 description: str | None = None) -> argparse.ArgumentParser:
    """The whole command line of one benchmark."""
    parser = argparse.ArgumentParser(prog=prog or f"gecko {command.name}", description=description)
    command.add_arguments(parser)
    _add_run_arguments(parser, command, settings)
    return parser


def options_from_args(args: argparse.Namespace, settings: Settings) -> RunOptions:
    """The `RunOptions` of parsed flags (defaults from the settings object).

    Raises:
        ValueError: A bad value (workers < 1, …).
    """
    if args.gecko_api_key_file is not None:
        key: str | None = read_secret_file(args.gecko_api_key_file)
    else:
        key = settings.api_key.get_secret_value() or None if settings.api_key is not None else None
    off = args.no_cache or (not settings.llm_cache and args.llm_cache is None)  # GECKO_LLM_CACHE=false
    cache = None if off else (args.llm_cache or settings.llm_cache_path or settings.state_dir / "llm_cache.db")
    return RunOptions(output_dir=args.output_dir, resume=args.resume, workers=args.workers, gecko_url=args.gecko_url,
                      gecko_api_key=key, llm_cache=cache, stop_after_untested=args.stop_after_untested,
                      debug=args.debug, verbose=args.verbose, progress=not args.no_progress)


def describe_invalid(exc: ValueError) -> str:
    """One line for bad settings (a pydantic validation error lists each field and what is wrong)."""
    if isinstance(exc, ValidationError):
        return "; ".join(": ".join(filter(None, (".".join(str(part) for part in error["loc"]), error["msg"])))
                         for error in exc.errors())
    return str(exc)


def _error(message: str, prefix: str = "error") -> int:
    print(f"{prefix}: {message}", file=sys.stderr)
    return EXIT_ERROR


def run_command(command: BenchmarkCommand, argv: Sequence[str] | None = None, *, prog: str | None = None,
                description: str | None = None) -> int:
    """Parse `argv`, run the benchmark, print the table; returns the exit code (see `summary.EXIT_*`)."""
    load_env()
    settings = Settings()
    os.umask(settings.file_mask())  # results, checkpoints and caches: 0600 in 0700 directories by default
    parser = build_parser(command, settings, prog, description)
    args = parser.parse_args(argv)
    try:
        options = options_from_args(args, settings)
        benchmark = command.from_args(args, options)
    except ValueError as exc:
        parser.error(describe_invalid(exc))
    try:
        summary = asyncio.run(run_benchmark(benchmark, options))
    except RunInterrupted as exc:
        print(format_table(exc.summary), file=sys.stderr)
        print(f"\ninterrupted: finished tasks are saved in {exc.summary.run_dir}; "
              f"rerun with --resume {exc.summary.run_dir} to go on", file=sys.stderr)
        return EXIT_INTERRUPTED
    except PreflightError as exc:
        return _error(str(exc), prefix="preflight failed")
    except RunError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        print("\ninterrupted before any task ran", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(format_table(summary))
    _print_report(summary.run_dir)
    return summary.exit_code


def _print_report(run_dir: Path) -> None:
    """Write the run's report.html and print its path (a report that cannot be made never fails the run)."""
    from benchmarks.runner.report_html import write_report

    try:
        print(f"report:  {write_report([run_dir])}")
    except Exception as exc:  # noqa: BLE001 - the run's results are saved; the report is a convenience
        logging.getLogger(__name__).warning("could not write the report of %s: %s", run_dir, exc)
        print(f"report:  not written ({exc}); try `gecko report {run_dir}`", file=sys.stderr)


def score_command(argv: Sequence[str] | None, lookup: Callable[[str], BenchmarkCommand]) -> int:
    """`gecko score RUN_DIR …`: write the official files of run directories again from their checkpoints and
    score them with the official scorers; returns the exit code.

    Args:
        argv: The command line after `score`.
        lookup: The registry: benchmark name → its command.
    """
    parser = argparse.ArgumentParser(prog="gecko score", description=(
        "Score run directories again from their checkpoint (tasks.jsonl) with the official scorers."))
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    args = parser.parse_args(argv)
    for path in args.run_dirs:
        try:
            name = RunDirectory.recorded_benchmark(path)
            command = lookup(name)
            run_dir = RunDirectory.open(path, command.name)
            benchmark = command.from_config(run_dir.read_config().get("config", {}),
                                            RunOptions(output_dir=path.parent, progress=False))
            summary = rescore(benchmark, run_dir)
        except (RunError, ValueError, KeyError) as exc:
            return _error(str(exc))
        print(format_table(summary))
    return EXIT_OK
