"""`gecko <command> …`: one console script for the server, the converter, every registered benchmark, scoring
and the benchmark toolkits.

```
gecko serve …        the Gecko server (gecko.cli; same flags as run_gecko_server.py)
gecko convert …      tool definitions → OpenAPI toolkits (gecko.convert.cli)
gecko twin capture|learn …  record a real MCP server's calls, learn its twin from them (gecko.twin.cli)
gecko verify …       tool-call dataset verification (gecko.verify.cli)
gecko <benchmark> …  run a registered benchmark (benchmarks.registry: bfcl, bfcl-multi, tau2) on the shared runner
gecko score RUN_DIR  write a run's official files again from its checkpoint and score them
gecko report RUN_DIR [RUN_DIR…]  a self-contained report.html with plots, runs side by side
gecko view RUN_DIR   the browser viewer on a run directory (tasks table, attempts side by side), read-only
gecko toolkits       build the benchmark toolkits (what `make toolkits` does)
gecko pool build     build the open-world tool pool from its pinned sources (what `make pool` does)
gecko openworld tasks  generate a validated open-world task set from the pool
gecko openworld --tasks DIR  run the open-world agents on a task set (a benchmark on the runner)
gecko data export RUN_DIR… -o OUT  training data (SFT, DPO pairs, a datasets dataset and card) from runs
```

Dispatch only: each command's flags and work belong to the module it calls, so `gecko <command> --help` is that
module's help. The dispatcher lives outside `gecko/` because the server package must never import benchmarks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from benchmarks.registry import BENCHMARKS, load_benchmark
from gecko_cli.extras import missing_extra_message

Command = Callable[[list[str]], int]
EXIT_MISSING_EXTRA = 2
"""A command needs an optional dependency that is not installed (the message names the extra); 2 as for any
other setup the command cannot run with."""


def _serve(argv: list[str]) -> int:
    from gecko.cli import main

    return main(argv, prog="gecko serve")


def _convert(argv: list[str]) -> int:
    from gecko.convert.cli import main

    return main(argv)


def _twin(argv: list[str]) -> int:
    from gecko.twin.cli import main

    return main(argv)


def _verify(argv: list[str]) -> int:
    from gecko.verify.cli import main

    return main(argv)


def _score(argv: list[str]) -> int:
    from benchmarks.runner.command import score_command

    return score_command(argv, load_benchmark)


def _report(argv: list[str]) -> int:
    from benchmarks.runner.report_html import report_command

    return report_command(argv)


def _view(argv: list[str]) -> int:
    from gecko_cli.view import view_command

    return view_command(argv)


def _toolkits(argv: list[str]) -> int:
    from gecko_cli.toolkits import main

    return main(argv)


def _pool(argv: list[str]) -> int:
    from benchmarks.openworld.pool.cli import main

    return main(argv)


def _openworld(argv: list[str]) -> int:
    """`gecko openworld tasks …` makes a task set; any other `gecko openworld …` runs agents on one (a benchmark)."""
    if argv[:1] == ["tasks"]:
        from benchmarks.openworld.tasks.cli import main

        return main(argv)
    return _benchmark("openworld")(argv)


def _data(argv: list[str]) -> int:
    from benchmarks.data_export.cli import data_main

    return data_main(argv)


def _benchmark(name: str) -> Command:
    def run(argv: list[str]) -> int:
        from benchmarks.runner import run_command

        return run_command(load_benchmark(name), argv, prog=f"gecko {name}", description=BENCHMARKS[name].help)
    return run


COMMANDS: dict[str, tuple[str, Command]] = {
    "serve": ("run the Gecko server (same flags as run_gecko_server.py)", _serve),
    "convert": ("convert OpenAI / BFCL / MCP / xLAM / Python tool definitions into OpenAPI toolkits", _convert),
    "twin": ("capture a real MCP server's calls and learn its twin's contract from them (gecko.twin.cli)", _twin),
    "verify": ("verify a tool-call dataset (OpenAI chat, xLAM, BFCL JSON Lines) by replaying it in Gecko", _verify),
    **{name: (registration.help, _benchmark(name)) for name, registration in BENCHMARKS.items()},
    "score": ("write a run directory's official files again from its checkpoint and score them", _score),
    "report": ("write a self-contained report.html (plots) of one or more run directories, side by side", _report),
    "view": ("serve the browser viewer on a run directory, finished or running (tasks, attempts side by side)", _view),
    "toolkits": ("build the benchmark toolkits (BFCL single- and multi-turn, tau2 mock)", _toolkits),
    "pool": ("build the open-world pool of thousands of real tool definitions (gecko pool build)", _pool),
    "openworld": ("open-world agents on a task set (run_openworld.py), or generate a task set from the pool "
                  "(gecko openworld tasks)", _openworld),
    "data": ("training data from run directories: gecko data export RUN_DIR… -o OUT (SFT, ShareGPT, DPO pairs from "
             "GATS's corrections, a datasets dataset and its card)", _data),
}
"""Command name → (help line, function of the remaining arguments returning the exit code)."""


def usage() -> str:
    """The text of `gecko --help`."""
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: gecko <command> [flags]   (gecko <command> --help for its flags; gecko --version)", "",
             "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (text, _) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `gecko`; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        from gecko import __version__

        print(f"gecko {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"gecko: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    try:
        return COMMANDS[name][1](rest)
    except ModuleNotFoundError as exc:  # an optional dependency: one line naming the extra, not a traceback
        message = missing_extra_message(name, exc)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return EXIT_MISSING_EXTRA
