"""The one benchmark runner: selection, preflight, run directory, checkpoint and resume, worker pool, progress,
circuit breaker, official files, summary and exit code, for every benchmark behind `protocol.Benchmark`
(see README.md). Benchmarks are registered in `benchmarks.registry`."""

from benchmarks.runner.batch import RunInterrupted, rescore, run_benchmark
from benchmarks.runner.checkpoint import LEDGER_FILE, Ledger, LedgerEntry, read_ledger
from benchmarks.runner.command import (
    add_agent_backend_argument,
    add_model_argument,
    add_selection_arguments,
    build_parser,
    require,
    run_command,
    selected_ids,
)
from benchmarks.runner.context import RunContext
from benchmarks.runner.errors import PreflightError, ResumeError, RunError, SelectionError
from benchmarks.runner.options import AUTO_GECKO, RunOptions
from benchmarks.runner.protocol import (
    Benchmark,
    BenchmarkCommand,
    Evaluation,
    LocalGecko,
    OfficialCheck,
    TaskOutcome,
    TaskStatus,
    WorkItem,
)
from benchmarks.runner.rundir import RunDirectory
from benchmarks.runner.summary import RunSummary

__all__ = [
    "AUTO_GECKO", "LEDGER_FILE", "Benchmark", "BenchmarkCommand", "Evaluation", "Ledger", "LedgerEntry", "LocalGecko",
    "OfficialCheck", "PreflightError", "ResumeError", "RunContext", "RunDirectory", "RunError", "RunInterrupted",
    "RunOptions", "RunSummary", "SelectionError", "TaskOutcome", "TaskStatus", "WorkItem", "add_agent_backend_argument",
    "add_model_argument", "add_selection_arguments", "build_parser", "read_ledger", "require", "rescore",
    "run_benchmark", "run_command", "selected_ids",
]
