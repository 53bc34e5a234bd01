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


class Registration(NamedTuple):
    """Where a benchmark's class is, and one line about it for `gecko --help`."""

    target: str
    """`module:Class`."""
    help: str


BENCHMARKS: dict[str, Registration] = {
    "bfcl": Registration("benchmarks.bfcl.benchmark:BfclSingleTurn",
                         "BFCL single-turn categories with GATS on Gecko (run_bfcl_single.py)"),
    "bfcl-multi": Registration("benchmarks.bfcl.benchmark:BfclMultiTurn",
                               "BFCL multi-turn with per-turn GATS, real execution and sync (run_bfcl_multi.py)"),
    "tau2": Registration("benchmarks.taubench.benchmark:Tau2Benchmark",
                         "tau2-bench airline and retail, with GATS hybrid mode (run_taubench.py)"),
    "fidelity": Registration("benchmarks.fidelity.benchmark:FidelityBenchmark",
                             "the fidelity harness: the same calls on real tools and in Gecko, compared"),
}
"""Registry name → its class and help line."""


class UnknownBenchmarkError(KeyError):
    """No benchmark is registered under this name."""

    def __str__(self) -> str:
        return f"unknown benchmark {self.args[0]!r}; registered: {', '.join(BENCHMARKS)}"


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
