"""The benchmarks, registered by name: what `gecko <name>` runs and `gecko score` rescored.

Each entry points at a class that implements `benchmarks.runner.BenchmarkCommand` (its command line) and
`benchmarks.runner.Benchmark` (a run). Classes are imported only when their benchmark is used, so a missing
optional dependency of one benchmark never breaks another. Adding a benchmark = its package + one line here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from benchmarks.runner import BenchmarkCommand
    from benchmarks.runner.run_view import Details
    from inference.env import EpisodeSpec


class Registration(NamedTuple):
    """Where a benchmark's class is, one line about it for `gecko --help`, and what it adds to a task's page in
    `gecko view`."""

    target: str
    """`module:Class`."""
    help: str
    details: str | None = None
    """`module:function` (`benchmarks.runner.run_view.Details`): the official verdict, the ground truth and the
    real execution of one task of a run; None when the benchmark adds nothing."""


BENCHMARKS: dict[str, Registration] = {
    "bfcl": Registration("benchmarks.bfcl.sweep:Bfcl",
                         "BFCL: a category, a leaderboard group, or the V4 leaderboard's all, with GATS on Gecko "
                         "(run_bfcl_single.py)",
                         "benchmarks.bfcl.view:task_details"),
    "bfcl-multi": Registration("benchmarks.bfcl.benchmark:BfclMultiTurn",
                               "BFCL multi-turn with per-turn GATS, real execution and sync (run_bfcl_multi.py)",
                               "benchmarks.bfcl.view:task_details"),
    "bfcl-memory": Registration("benchmarks.bfcl.memory_benchmark:BfclMemory",
                                "BFCL V4 memory (kv, vector, rec_sum): prerequisite conversations first, real memory "
                                "tools, GATS on Gecko", "benchmarks.bfcl.memory_benchmark:task_details"),
    "tau2": Registration("benchmarks.taubench.benchmark:Tau2Benchmark",
                         "tau2-bench airline and retail, with GATS hybrid mode (run_taubench.py)",
                         "benchmarks.taubench.view:task_details"),
    "fidelity": Registration("benchmarks.fidelity.benchmark:FidelityBenchmark",
                             "the fidelity harness: the same calls on real tools and in Gecko, compared"),
    "openworld": Registration("benchmarks.openworld.benchmark:OpenWorldBenchmark",
                              "open-world agents (select-execute, planner-actor) on a task set over the tool pool "
                              "(run_openworld.py)"),
}
"""Registry name → its class and help line."""


class UnknownBenchmarkError(KeyError):
    """No benchmark is registered under this name."""

    def __str__(self) -> str:
        return f"unknown benchmark {self.args[0]!r}; registered: {', '.join(BENCHMARKS)}"


def load_details(name: str) -> Details | None:
    """What benchmark `name` adds to a task's page in `gecko view` (imported now), or None (an unknown name too)."""
    registration = BENCHMARKS.get(name)
    if registration is None or registration.details is None:
        return None
    module, _, attribute = registration.details.partition(":")
    details: Details = getattr(importlib.import_module(module), attribute)
    return details


def load_benchmark(name: str) -> BenchmarkCommand:
    """The class registered as `name` (imported now).

    Raises:
        UnknownBenchmarkError: Nothing is registered as `name`.
    """
    try:
        registration = BENCHMARKS[name]
    except KeyError:
        raise UnknownBenchmarkError(name) from None
    module, _, attribute = registration.target.partition(":")
    command: BenchmarkCommand = getattr(importlib.import_module(module), attribute)
    return command


ENV_SUITES: dict[str, Registration] = {
    "bfcl_multi_turn": Registration("benchmarks.bfcl.env_suite:multi_turn_episodes",
                                    "the 800 BFCL multi-turn tasks (Gecko serves data/bfcl/openapi/multi_turn)"),
    "tau2": Registration("benchmarks.taubench.env_suite:tau2_episodes",
                         "the 164 tau2 airline and retail tasks (Gecko serves benchmarks/taubench/toolkits)"),
}
"""Ready-made RL environment suites (`inference.env` episode specs) by name."""


def load_env_suite(name: str) -> list[EpisodeSpec]:
    """The episode specs of the environment suite `name`.

    Raises:
        KeyError: no suite is registered as `name`.
    """
    if name not in ENV_SUITES:
        raise KeyError(f"unknown environment suite {name!r}; registered: {', '.join(ENV_SUITES)}")
    module, _, attribute = ENV_SUITES[name].target.partition(":")
    specs: list[EpisodeSpec] = getattr(importlib.import_module(module), attribute)()
    return specs
