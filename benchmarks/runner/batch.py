"""`run_benchmark`: the one loop every benchmark runs on.

```
select ─► [resume: open the run dir, check its settings] ─► preflight (models, Gecko, the benchmark's checks)
  ─► run dir (new) + config.json ─► skip keys done in tasks.jsonl ─► `workers` workers:
       run(item) ─► trace line, then tasks.jsonl line (both durable) + progress ─► circuit breaker
  ─► finish: official files from tasks.jsonl (always), official scores (unless interrupted) ─► summary.json
```

A task that raises is recorded as `errored` and costs no other task (with `debug`, the run stops instead).
Ctrl-C loses no finished task: the official files and `summary.json` are written from the checkpoint before
`RunInterrupted` is raised, and `--resume <run dir>` goes on where it stopped.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from benchmarks.runner.checkpoint import LEDGER_FILE, Ledger, LedgerEntry, resumable_done
from benchmarks.runner.context import RunContext
from benchmarks.runner.errors import PreflightError, ResumeError, SelectionError
from benchmarks.runner.options import RunOptions
from benchmarks.runner.progress import CircuitBreaker, Progress
from benchmarks.runner.protocol import Benchmark, TaskOutcome, WorkItem
from benchmarks.runner.rundir import SUMMARY_FILE, RunDirectory, utc_now
from benchmarks.runner.summary import RunSummary, summarise
from inference.gecko import GeckoClient
from utils.llm import LLMClient, LLMError, check_model_names, is_engine_name, probe_models

log = logging.getLogger("benchmarks.runner")


class RunInterrupted(Exception):  # noqa: N818 - an outcome, not an error
    """The run was cancelled (Ctrl-C); finished tasks are saved. Carries the partial summary."""

    def __init__(self, summary: RunSummary) -> None:
        super().__init__(f"interrupted; finished tasks are saved in {summary.run_dir}")
        self.summary = summary


def _select(benchmark: Benchmark) -> list[WorkItem]:
    try:
        items = list(benchmark.select())
    except ValueError as exc:
        raise SelectionError(str(exc)) from exc
    keys = [item.key for item in items]
    if len(set(keys)) != len(keys):
        raise SelectionError("the selection names some tasks twice")
    return items


def _open_for_resume(benchmark: Benchmark, options: RunOptions) -> RunDirectory | None:
    """The run directory to continue, after checking that its result-changing settings match this run's."""
    if options.resume is None:
        return None
    run_dir = RunDirectory.open(options.resume, benchmark.name)
    recorded = run_dir.read_config().get("config", {})
    current = benchmark.config()
    changed = [key for key in benchmark.result_settings() if recorded.get(key) != current.get(key)]
    if changed:
        diff = ", ".join(f"{key} was {recorded.get(key)!r}, now {current.get(key)!r}" for key in changed)
        raise ResumeError(f"cannot resume {run_dir.path}: {diff}; give the same settings, or start a new run")
    return run_dir


def _check_models(models: Mapping[str, str], offline: Sequence[str]) -> None:
    try:
        check_model_names(dict(models), offline=offline)
    except LLMError as exc:
        raise PreflightError(str(exc)) from exc


async def _probe_models(models: Mapping[str, str], context: RunContext) -> list[dict[str, Any]]:
    """One tiny real request per configured model (key, endpoint, model name, tool calling), each judge of a panel
    (`a,b,c`) on its own (`utils.llm.probe_models`)."""
    if all(is_engine_name(name) for name in models.values()):
        return []
    try:
        reports = await probe_models(context.llm(), models)
    except LLMError as exc:
        raise PreflightError(str(exc)) from exc
    for report in reports:
        log.info("preflight: model %s (%s) answered in %.2f s%s", report.model, ", ".join(report.roles),
                 report.latency_s, f"; tool calling: {report.tools}" if report.tools else "")
    return [report.public() for report in reports]


def _within_slots(options: RunOptions, probes: Sequence[Mapping[str, Any]]) -> RunOptions:
    """`options` with no more workers than the run's models serve requests at once (a one-slot llama.cpp server
    answers one request at a time: more tasks at once only queue, and time out, behind each other)."""
    limits = [(probe["slots"], probe["model"]) for probe in probes if probe.get("slots")]
    if not limits:
        return options
    slots, model = min(limits)
    if slots >= options.workers:
        return options
    log.warning("model %s serves %d request(s) at a time (its /props): running %d task(s) at once instead of %d",
                model, slots, slots, options.workers)
    return replace(options, workers=slots)


class _Run:
    """The mutable state of one run (owned by `run_benchmark`'s event loop)."""

    def __init__(self, benchmark: Benchmark, run_dir: RunDirectory, ledger: Ledger, options: RunOptions,
                 progress: Progress) -> None:
        self.benchmark = benchmark
        self.run_dir = run_dir
        self.ledger = ledger
        self.options = options
        self.progress = progress
        self.breaker = CircuitBreaker(options.stop_after_untested)
        self.fatal: Exception | None = None
        """With `debug`: the first exception a task raised."""

    async def run_one(self, item: WorkItem) -> None:
        started = time.perf_counter()
        try:
            outcome = await self.benchmark.run(item)
        except Exception as exc:  # a bug in one task must not cost the others; recorded, never scored
            if self.options.debug:  # stop: no new task starts, the running ones finish, then it is raised
                self.fatal = exc
                return
            text = "".join(traceback.format_exception(exc))
            log.error("task %s raised:\n%s", item.key, text)
            outcome = TaskOutcome("errored", reason=f"{type(exc).__name__}: {exc}",
                                  trace={"id": item.key, "status": "errored", "error": text})
        entry = LedgerEntry.of(item, outcome, time.perf_counter() - started, utc_now())
        # The trace first, then the checkpoint line: a task the checkpoint calls done always has its trace (an
        # interrupt between the two leaves a trace without a line, and the task is run again on resume). Both
        # fsyncs run in a thread so they do not hold up the other tasks; Ctrl-C must not leave a task
        # half-recorded (in the file, not yet in the ledger the official files are written from): a cancelled
        # task first lets its record finish.
        record = asyncio.ensure_future(asyncio.to_thread(self._record, item, outcome, entry))
        try:
            await asyncio.shield(record)
        except asyncio.CancelledError:
            await record
            raise
        log.log(logging.INFO if outcome.status == "done" else logging.WARNING, "task %s: %s%s", item.key,
                outcome.status, f" ({outcome.reason})" if outcome.reason else "")
        self.progress.update(item, outcome)
        self.breaker.observe(outcome)

    def _record(self, item: WorkItem, outcome: TaskOutcome, entry: LedgerEntry) -> None:
        """Write the task's trace (keyed like the checkpoint: a --faults arm's task id is not its key), then its
        checkpoint line."""
        if outcome.trace is not None:
            self.run_dir.append_trace(item.group, {**outcome.trace, "id": item.key})
        self.ledger.append(entry)

    async def run_all(self, items: Sequence[WorkItem]) -> None:
        queue: asyncio.Queue[WorkItem] = asyncio.Queue()
        for item in items:
            queue.put_nowait(item)

        async def worker() -> None:
            while not queue.empty() and not self.breaker.tripped and self.fatal is None:
                await self.run_one(queue.get_nowait())

        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(self.options.workers, len(items)))):
                group.create_task(worker())
        if self.fatal is not None:
            raise self.fatal


async def run_benchmark(benchmark: Benchmark, options: RunOptions, *, gecko: GeckoClient | None = None,
                        llm: LLMClient | None = None, flags: Mapping[str, Any] | None = None) -> RunSummary:
    """Run (or resume) a benchmark; see the module docstring.

    Args:
        benchmark: The configured run.
        options: How to carry it out.
        flags: The command line's flags (JSON), recorded in `config.json` so that a resume can restore them.
        gecko: A Gecko client to use (benches count requests with it); default: built from the options.
        llm: An LLM client to use (tests script it); default: built from the options when needed.

    Raises:
        SelectionError, PreflightError, ResumeError: The run could not start (nothing was written).
        RunInterrupted: Ctrl-C; the partial summary is written and attached.
    """
    started = time.perf_counter()
    items = _select(benchmark)
    resumed = _open_for_resume(benchmark, options)
    name = resumed.path.name if resumed is not None else RunDirectory.name_for(benchmark.run_label())
    context = RunContext(name, options, gecko=gecko, llm=llm)
    try:
        models = benchmark.models()
        _check_models(models, benchmark.offline_models)
        probes = await _probe_models(models, context) if options.probe_models else []
        options = _within_slots(options, probes)
        if benchmark.needs_gecko:
            context.start_local_gecko(benchmark.local_gecko())
        environment = dict(await benchmark.preflight(items, context))
        environment["model_probes"] = probes
        environment.setdefault("gecko_url", context.gecko_url if benchmark.needs_gecko else None)
        run_dir = resumed or RunDirectory.create(options.output_dir, name)
        if resumed is None:
            run_dir.record_config({"benchmark": benchmark.name, "config": dict(benchmark.config()),
                                   "result_settings": sorted(benchmark.result_settings()),
                                   "options": options.public(), "environment": environment,
                                   "flags": dict(flags or {})})
        else:
            run_dir.record_resume(options.public(), environment, dict(benchmark.config()))
        return await _run_in(run_dir, benchmark, items, options, started)
    finally:
        await context.aclose()


async def _run_in(run_dir: RunDirectory, benchmark: Benchmark, items: Sequence[WorkItem], options: RunOptions,
                  started: float) -> RunSummary:
    ledger = Ledger(run_dir.file(LEDGER_FILE))
    before = ledger.latest()
    done = resumable_done(before, run_dir.traced_keys()) if before else set()
    pending = [item for item in items if item.key not in done]
    handler = run_dir.attach_log(options.debug)
    progress = Progress(benchmark.name, len(pending), enabled=options.progress, verbose=options.verbose)
    run = _Run(benchmark, run_dir, ledger, options, progress)
    log.info("run %s: %d selected, %d done before, %d to run", run_dir.path.name, len(items), len(done),
             len(pending))
    completed = interrupted = False
    try:
        await run.run_all(pending)
        completed = True
    except asyncio.CancelledError:
        interrupted = True
    finally:
        progress.close()
        try:
            summary = _finish(run, items, before, complete=completed, interrupted=interrupted, started=started)
        finally:
            RunDirectory.detach_log(handler)
            ledger.close()
            run_dir.close()
    if interrupted:
        raise RunInterrupted(summary)
    return summary


def _finish(run: _Run, items: Sequence[WorkItem], before: Mapping[str, LedgerEntry], *, complete: bool,
            interrupted: bool, started: float) -> RunSummary:
    """Official files and scores from the checkpoint, then `summary.json` (runs on interrupt too)."""
    entries = run.ledger.entries
    summary = summarise(run.benchmark.name, run.run_dir.path, items, entries, before)
    summary.interrupted = interrupted
    summary.stopped = run.breaker.reason
    try:
        order = {item.key: index for index, item in enumerate(items)}  # tasks finish in any order; files do not
        latest = sorted(run.ledger.latest().values(), key=lambda entry: order.get(entry.key, len(order)))
        summary.evaluation = run.benchmark.finish(latest, run.run_dir.path, complete)
    except Exception:  # the checkpoint is safe; the official files can be rebuilt with `gecko score`
        log.exception("writing or scoring the official files failed")
        if complete:
            raise
    finally:
        summary.wall_time_s = time.perf_counter() - started
        run.run_dir.write_json(SUMMARY_FILE, summary.public())
    if summary.stopped:
        log.warning("stopped: %s", summary.stopped)
    return summary


def rescore(benchmark: Benchmark, run_dir: RunDirectory) -> RunSummary:
    """Write the official files of a run directory again from its checkpoint and score them (`gecko score`).

    Raises:
        ResumeError: The directory has no checkpoint.
    """
    path = run_dir.file(LEDGER_FILE)
    if not path.exists():
        raise ResumeError(f"{run_dir.path} has no {LEDGER_FILE}: nothing to score")
    ledger = Ledger(path)
    try:
        latest = ledger.latest()
        items = [WorkItem(entry.key, entry.group, None) for entry in latest.values()]
        summary = summarise(benchmark.name, run_dir.path, items, ledger.entries, {})
        summary.evaluation = benchmark.finish(list(latest.values()), run_dir.path, True)
    finally:
        ledger.close()
    return summary
