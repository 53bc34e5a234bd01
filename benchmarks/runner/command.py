"""The command line of every benchmark (`gecko <benchmark> …`): the shared argument groups, and the one place
that turns a run into console output and an exit code.

```
build_parser(command) = the benchmark's own flags (command.add_arguments)
                      + selection (--ids, --ids-file, --num-tasks) + run (--output-dir, --resume, --workers, …)
                      + Gecko (--gecko-url, --gecko-api-key-file) + LLM cache (--no-cache, --llm-cache)
run_command(command, argv) → [--resume: the recorded flags under the given ones] → options → command.from_args
                           → run_benchmark → table → exit code (summary.EXIT_*)
```

A resumed run takes the flags it was started with (recorded as `flags` in `config.json`) for every flag not given
again: `--resume DIR` alone goes on with the same model, trials, selection … A flag given again replaces the
recorded one; if it changes results, `run_benchmark` refuses the resume and lists the differences.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchmarks.runner.batch import RunInterrupted, rescore, run_benchmark
from benchmarks.runner.checkpoint import LEDGER_FILE, latest, read_ledger
from benchmarks.runner.errors import PreflightError, RunError
from benchmarks.runner.options import AUTO_GECKO, DEFAULT_STOP_AFTER_UNTESTED, RunOptions
from benchmarks.runner.protocol import BenchmarkCommand, OfficialCheck
from benchmarks.runner.rundir import RunDirectory
from benchmarks.runner.selection import read_ids_file, split_ids
from benchmarks.runner.summary import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, format_table
from inference.agents.backends import AGENT_BACKENDS, DEFAULT_AGENT_BACKEND
from utils.llm import load_env
from utils.paths import results_dir
from utils.settings import Settings, read_secret_file
from utils.settings_cli import RefuseSecret

FLAGS_KEY = "flags"
"""Where `config.json` records the command line's flags (parsed), which a resume restores."""
_NOT_RESTORED = frozenset({"resume", "gecko_api_key", "gecko_api_key_file", "debug", "verbose", "no_progress",
                           "output_dir", "no_cache", "llm_cache"})
"""Flags that are neither recorded nor restored: secrets, where output goes, how the run is displayed."""
_UNSET = object()


def add_model_argument(parser: argparse.ArgumentParser, *flags: str, default: str | None = None,
                       help_text: str = "") -> None:
    """`--model` (with extra spellings in `flags`); without a default the benchmark's `from_args` requires it
    (`require`), so that `--resume RUN_DIR` alone can restore it."""
    text = help_text or "scripted-* (offline) | an LLM alias | openai-compatible:<model>@<base_url>"
    parser.add_argument("--model", *flags, dest="model", default=default,
                        help=text if default is not None else f"{text} (required)")


def require(args: argparse.Namespace, **flags: str) -> None:
    """Check that flags without a default were given (`require(args, domain="--domain")`).

    Raises:
        ValueError: One is missing (the message names it).
    """
    missing = [flag for dest, flag in flags.items() if getattr(args, dest, None) is None]
    if missing:
        raise ValueError(f"the following arguments are required: {', '.join(missing)}")


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
    default_output = results_dir() / command.name  # ./results/<benchmark> of the working directory
    run = parser.add_argument_group("run")
    run.add_argument("--output-dir", type=Path, default=default_output,
                     help=f"new run directories go under it (default {default_output})")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR",
                     help="continue this run directory in place: skip its done tasks, run the others")
    run.add_argument("--workers", type=int, default=command.default_workers, help="tasks run concurrently")
    run.add_argument("--stop-after-untested", type=int, default=DEFAULT_STOP_AFTER_UNTESTED, metavar="N",
                     help="circuit breaker: stop when N tasks in a row are untested (infrastructure down); 0 = never "
                          f"(default {DEFAULT_STOP_AFTER_UNTESTED})")
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
    llm = parser.add_argument_group("LLM")
    llm.add_argument("--llm-timeout", type=float, default=settings.llm_timeout_s, metavar="SECONDS",
                     help="seconds each LLM request of the run's agents may take before it is retried (default "
                          f"{settings.llm_timeout_s:g}: GECKO_LLM_TIMEOUT_S); a slow local model needs more")
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
                      debug=args.debug, verbose=args.verbose, progress=not args.no_progress,
                      llm_timeout_s=args.llm_timeout)


def given_flags(parser: argparse.ArgumentParser, argv: Sequence[str] | None, parsed: argparse.Namespace) -> set[str]:
    """The destinations of the flags actually given in `argv` (parsing again over a namespace of markers, which
    argparse leaves alone where no flag sets a value)."""
    preset = argparse.Namespace(**{dest: _UNSET for dest in vars(parsed)})
    again = parser.parse_args(argv, namespace=preset)
    return {dest for dest, value in vars(again).items() if value is not _UNSET}


def recordable_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The flags to record in `config.json` (JSON values; an ids file becomes the ids it held).

    Raises:
        ValueError: The ids file cannot be read.
    """
    flags = {dest: str(value) if isinstance(value, Path) else value
             for dest, value in vars(args).items() if dest not in _NOT_RESTORED}
    if getattr(args, "ids_file", None) is not None:
        flags["ids"], flags["ids_file"] = list(read_ids_file(args.ids_file)), None
    return flags


def restore_flags(args: argparse.Namespace, given: set[str], recorded: Mapping[str, Any]) -> argparse.Namespace:
    """`args` with every flag not `given` again taken from the `recorded` ones (a resumed run's original flags).
    `--ids`, `--ids-file` and `--all` are one choice: giving any of them replaces the recorded selection."""
    selection = {"ids", "ids_file", "all"}
    keep = given | (selection if given & selection else set())
    restored = argparse.Namespace(**vars(args))
    for dest, value in recorded.items():
        if dest in vars(args) and dest not in keep and dest not in _NOT_RESTORED:
            setattr(restored, dest, value)
    return restored


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
    if args.resume is not None:
        try:
            recorded = RunDirectory.open(args.resume, command.name).read_config().get(FLAGS_KEY) or {}
        except RunError as exc:
            return _error(str(exc))
        args = restore_flags(args, given_flags(parser, argv, args), recorded)
    try:
        options = options_from_args(args, settings)
        benchmark = command.from_args(args, options)
        flags = recordable_flags(args)
    except ValueError as exc:  # one line, no usage: the message names the flag
        print(f"{parser.prog}: error: {describe_invalid(exc)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        summary = asyncio.run(run_benchmark(benchmark, options, flags=flags))
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


def format_official(check: OfficialCheck) -> str:
    """The official tools' figures beside ours, the commands, and what did not pass."""
    rows = [("figure", "ours", "official", "")]
    rows += [(name, str(ours), str(official), "" if ours == official else "DIFFERENT")
             for name, ours, official in check.rows]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines += [f"official command: {command}" for command in check.commands]
    lines += [f"note: {note}" for note in check.notes]
    lines += [f"problem: {problem}" for problem in check.problems]
    if not (check.rows or check.commands or check.problems):
        lines.append("no official tool checked these figures")
    else:
        lines.append("the official tools agree with our figures" if check.agrees
                     else "the official tools do NOT agree with our figures (or could not check them)")
    return "\n".join(lines)


def score_command(argv: Sequence[str] | None, lookup: Callable[[str], BenchmarkCommand]) -> int:
    """`gecko score [--official] [--overall] RUN_DIR …`: write the official files of run directories again from their
    checkpoints and score them; with `--official`, also run the benchmark's official tools on those files and
    compare. Returns the exit code (1 when a directory cannot be scored or the official tools disagree).

    Args:
        argv: The command line after `score`.
        lookup: The registry: benchmark name → its command.
    """
    parser = argparse.ArgumentParser(prog="gecko score", description=(
        "Score run directories again from their checkpoint (tasks.jsonl) with the official scorers."))
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--official", action="store_true",
                        help="also run the benchmark's own official tools (bfcl evaluate; tau2 evaluate-trajs and "
                             "verify-trajs) on the official files and compare their figures with ours")
    parser.add_argument("--overall", action="store_true",
                        help="also print the benchmark's overall score over all the run directories together (BFCL: "
                             "the V4 leaderboard's rows and weights; categories not run are listed as missing, never "
                             "counted as 0%%); with --official, the official leaderboard code's values beside ours")
    args = parser.parse_args(argv)
    code = EXIT_OK
    names: list[str] = []
    for path in args.run_dirs:
        try:
            name = RunDirectory.recorded_benchmark(path)
            names.append(name)
            command = lookup(name)
            run_dir = RunDirectory.open(path, command.name)
            benchmark = command.from_config(run_dir.read_config().get("config", {}),
                                            RunOptions(output_dir=path.parent, progress=False))
            summary = rescore(benchmark, run_dir)
        except (RunError, ValueError, KeyError) as exc:
            return _error(str(exc))
        print(format_table(summary))
        if args.official:
            check = benchmark.official_check(list(latest(read_ledger(run_dir.file(LEDGER_FILE))).values()), path)
            print(format_official(check))
            if not check.agrees:
                code = EXIT_ERROR
    if args.overall:
        overall = {getattr(lookup(name), "overall_report", None) for name in names}
        if len(overall) != 1 or None in overall:
            return _error("--overall: the run directories must all be of one benchmark that has an overall score "
                          f"(got {', '.join(sorted(set(names)))})")
        try:
            text, agrees = overall.pop()(args.run_dirs, args.official)  # type: ignore[misc]
        except (RunError, ValueError, RuntimeError, OSError) as exc:
            return _error(f"--overall: {exc}")
        print(text)
        if not agrees:
            code = EXIT_ERROR
    return code
