"""What a benchmark implements to run on the shared runner, and the values that cross that boundary.

```
Benchmark.select()                  → [WorkItem]            which tasks (key, group, the benchmark's own task)
Benchmark.preflight(items, context) → facts to record       check and get ready; raise PreflightError
Benchmark.run(item)                 → TaskOutcome           run and score one task: done | untested | errored
Benchmark.finish(entries, run_dir, complete) → Evaluation   official files from the records; official scores
Benchmark.official_check(entries, run_dir) → OfficialCheck  the official tools on those files (`gecko score --official`)
```

A benchmark never loops, retries, counts, checkpoints or prints: the runner (`batch.py`) does, the same way
for every benchmark. A task is `done` when it produced a result that is scored, `untested` when
infrastructure failed (Gecko or an LLM down after retries: not the model's fault, never scored, rerun by
`--resume`), `errored` when it raised (a bug: logged with its traceback, never scored, rerun by `--resume`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

if TYPE_CHECKING:
    import argparse

    from benchmarks.runner.checkpoint import LedgerEntry
    from benchmarks.runner.context import RunContext
    from benchmarks.runner.options import RunOptions

TaskStatus = Literal["done", "untested", "errored"]
"""`done`: produced a scored result. `untested`: infrastructure failed. `errored`: the task raised (a bug)."""


@dataclass(frozen=True)
class WorkItem:
    """One unit of work of a run."""

    key: str
    """Unique within the run; what the checkpoint and `--resume` know it by (BFCL: the task id; tau2:
    `<task id>#<trial>`)."""
    group: str
    """What results are reported by (BFCL: the category; tau2: the domain)."""
    task: Any = field(compare=False, repr=False)
    """The benchmark's own task object, handed back to `Benchmark.run`."""


@dataclass(frozen=True)
class TaskOutcome:
    """What one task produced."""

    status: TaskStatus
    reason: str | None = None
    """Why it is untested or errored (one line); None when done."""
    score: float | None = None
    """The task's score for the running figure (1.0/0.0 for pass/fail, or a reward); None when unscored."""
    record: Any = None
    """The benchmark's result record as JSON data (a BFCL result line, a tau2 simulation); the official files
    are written from these. None when the task left nothing to record."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """A few JSON fields for the task's row in `summary.json` (GATS attempts, termination reason, …)."""
    trace: Mapping[str, Any] | None = None
    """A JSON account of everything the task did, appended to `traces_<group>.jsonl`; None for no trace."""
    usage: Sequence[Mapping[str, Any]] = ()
    """LLM usage records (role, model, tokens, cost) for the run's cost by role."""
    note: str | None = None
    """Extra text for the `--verbose` line of the task."""
    outage: bool = True
    """For an untested task: whether the infrastructure failed (the circuit breaker counts it). False when the run's
    configuration rules the task out (a benchmark's backend has no key): the breaker ignores it."""


@dataclass(frozen=True)
class Evaluation:
    """What `Benchmark.finish` reports."""

    metrics: Mapping[str, Any] = field(default_factory=dict)
    """JSON figures from the official scoring (recorded under `evaluation` in `summary.json`)."""
    lines: tuple[str, ...] = ()
    """Lines printed under the end-of-run table (where the official files are, how to score them again)."""


@dataclass(frozen=True)
class OfficialCheck:
    """What the benchmark's own official tools said about a run's official files, beside our figures."""

    rows: tuple[tuple[str, Any, Any], ...] = ()
    """(figure, ours, the official tools') — they must be equal."""
    commands: tuple[str, ...] = ()
    """The official commands as run."""
    problems: tuple[str, ...] = ()
    """An official tool failed, or an official check did not pass."""
    notes: tuple[str, ...] = ()
    """What else to know (a check that cannot pass for this run, and why)."""

    @property
    def agrees(self) -> bool:
        """Every figure equal and no problem."""
        return not self.problems and all(ours == official for _, ours, official in self.rows)


class Benchmark(Protocol):
    """One configured run of a benchmark (see the module docstring for the call order)."""

    name: ClassVar[str]
    """The registry name (`gecko <name>`), recorded as `benchmark` in `config.json`."""
    offline_models: ClassVar[tuple[str, ...]]
    """The offline agents its `--model` takes (`scripted-*`), named when a model name is unknown."""

    def config(self) -> Mapping[str, Any]:
        """Everything that defines the run, as JSON (recorded in `config.json`; `from_config` reads it back)."""
        ...

    def result_settings(self) -> Mapping[str, Any]:
        """The part of `config()` that changes results (model, retries, seeds, …): a resumed run must match it.
        The rest is selection (which tasks), which a resume may change."""
        ...

    def run_label(self) -> str:
        """A short, path-safe name for the run directory (`<UTC time>_<label>`)."""
        ...

    def models(self) -> Mapping[str, str]:
        """Usage role (a `utils.roles.CALL_ROLES` name) → model name of every LLM the run calls itself; none for
        scripted participants. Before any task runs, the runner checks each with one tiny real request (key,
        endpoint, model name, and tool calling for roles whose calls offer tools)."""
        ...

    @property
    def needs_gecko(self) -> bool:
        """Whether the run talks to Gecko (then `--gecko-url` is checked and `auto` starts one)."""
        ...

    def local_gecko(self) -> LocalGecko | None:
        """How to start a Gecko for this run when `--gecko-url auto` is given; None: not supported."""
        ...

    def select(self) -> Sequence[WorkItem]:
        """The tasks of the run, in order.

        Raises:
            ValueError: A bad selection (unknown id, category, split …); the message says what is wrong.
        """
        ...

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> Mapping[str, Any]:
        """Check that everything the run needs is in place and get ready (clients, agents); nothing is written
        yet. Returns facts to record in `config.json` (e.g. Gecko's roles and version).

        Raises:
            PreflightError: What is wrong and how to fix it.
        """
        ...

    async def run(self, item: WorkItem) -> TaskOutcome:
        """Run one task and score it. Infrastructure failures return `untested`; an exception is a bug (the
        runner records it as `errored`)."""
        ...

    def finish(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        """Write the official files from `entries` (the latest entry of every key in the run directory, any
        status) and, when `complete` (not interrupted), score them with the official scorer."""
        ...

    def official_check(self, entries: Sequence[LedgerEntry], run_dir: Path) -> OfficialCheck:
        """Run the benchmark's official tools, as their documentation invokes them, on the official files `finish`
        wrote, and set their figures beside ours (from `entries`)."""
        ...


class BenchmarkCommand(Protocol):
    """What the registry holds for a benchmark: the `Benchmark` class itself, whose class attributes and class
    methods give its command line and build its runs (so this protocol describes the class object)."""

    name: str
    default_gecko_url: str | None
    """`--gecko-url` default (None: the settings' `gecko_url`)."""
    default_workers: int
    """`--workers` default."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the benchmark's own flags (`command.build_parser` adds the shared groups)."""
        ...

    def from_args(self, args: argparse.Namespace, options: RunOptions) -> Benchmark:
        """The run for parsed flags.

        Raises:
            ValueError: Flags that do not make a run (the message says which).
        """
        ...

    def from_config(self, config: Mapping[str, Any], options: RunOptions) -> Benchmark:
        """The run recorded as `config()` in a run directory (`gecko score`, resuming).

        Raises:
            ValueError: The record does not describe a run of this benchmark.
        """
        ...


@dataclass(frozen=True)
class LocalGecko:
    """A Gecko the runner starts for a run (`--gecko-url auto`) and stops after it."""

    schemas_dirs: tuple[Path, ...]
    server_args: tuple[str, ...] = ()
    """Extra `gecko serve` flags, e.g. `("--state-model", "none")`."""
    workers: int = 1
