"""Batch runner of BFCL single-turn: task selection, concurrency, resume, progress, run directory, scoring.

Each category is one result file, appended one durable line per finished task (`export.ResultWriter`):
Ctrl-C loses no finished task, and `resume=True` skips the ids already in the file and appends the rest to
the same file, so the final score covers every task. Untested tasks (infrastructure failures) get no line:
a resumed run retries them. After each category the whole file is scored with the official checker
(`evaluate.evaluate_files`), and the score files go beside the results.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from benchmarks.bfcl.agents import AgentFactory, AgentSettings, agent_factory, is_scripted
from benchmarks.bfcl.categories import category_of_id
from benchmarks.bfcl.evaluate import ResultFile, evaluate_files
from benchmarks.bfcl.export import ResultWriter, model_dir_name, read_results, result_path
from benchmarks.bfcl.loader import SingleTurnTask, load_category, load_tasks, read_ids_file
from benchmarks.bfcl.preflight import preflight
from benchmarks.bfcl.rundir import RunDirectory, results_dir, score_dir
from benchmarks.bfcl.scoring import score_single_turn
from benchmarks.bfcl.single_turn import TaskOutcome, run_single_task
from gats import GatsConfig
from inference.gecko import GeckoClient, HealthInfo
from utils.llm import LLMClient, create_client

log = logging.getLogger("benchmarks.bfcl")
DEFAULT_WORKERS = 8
DEFAULT_MAX_RETRIES = 2


@dataclass(frozen=True)
class RunConfig:
    """What every BFCL run needs (single- and multi-turn runners subclass it with their defaults)."""

    categories: tuple[str, ...]
    model: str
    gecko_url: str
    output_dir: Path
    ids: tuple[str, ...] | None = None
    """Task ids (full, or short ones like `3` for a single category)."""
    ids_file: Path | None = None
    num_tasks: int | None = None
    """Only the first N selected tasks of each category."""
    workers: int = DEFAULT_WORKERS
    """Tasks run concurrently."""
    max_retries: int = DEFAULT_MAX_RETRIES
    """0 = the no-GATS baseline (one attempt, not judged)."""
    resume: bool = False
    seed: int = 0
    error_rate: float = 0.6
    max_steps: int = 10
    temperature: float | None = 0.0
    generate_checklist: bool = False
    llm_cache: Path | None = None
    """SQLite file of the LLM reply cache (None: no cache)."""
    gecko_api_key: str | None = None
    """Bearer key when Gecko runs with `--api-key`."""
    debug: bool = False
    """Keep Gecko sessions, log at DEBUG, and stop on the first unexpected error."""
    verbose: bool = False
    """Print one line per task."""
    progress: bool = True

    def gats(self) -> GatsConfig:
        """The GATS configuration of the run (of every turn, for multi-turn)."""
        return GatsConfig(max_retries=self.max_retries, generate_checklist=self.generate_checklist,
                          keep_sessions=self.debug)

    def agents(self) -> AgentSettings:
        """How agents are built."""
        return AgentSettings(model=self.model, seed=self.seed, error_rate=self.error_rate,
                             max_steps=self.max_steps, temperature=self.temperature)


@dataclass(frozen=True)
class SingleTurnRunConfig(RunConfig):
    """Everything a single-turn run needs (built by `run_bfcl_single.py` from its flags)."""


@dataclass
class CategoryReport:
    """What a run did in one category."""

    category: str
    result_file: str
    selected: int = 0
    skipped: int = 0
    """Already in the result file (resume)."""
    finished: int = 0
    """Written this run."""
    correct: int = 0
    """Correct among `finished` (the running accuracy's numerator)."""
    untested: int = 0
    crashed: int = 0
    """Tasks that raised an unexpected error (a bug; see run.log); not written, not scored."""
    recovered: int = 0
    """Finished tasks whose best attempt was a retry that succeeded (what GATS fixed)."""
    accuracy: float | None = None
    """Official-checker accuracy over the whole result file after this run."""
    scored: int = 0
    dataset_size: int = 0
    seconds: float = 0.0


@dataclass
class RunReport:
    """The outcome of a run."""

    run_dir: Path
    results_dir: Path
    categories: list[CategoryReport] = field(default_factory=list)
    interrupted: bool = False

    def public(self) -> dict[str, Any]:
        """JSON form (`summary.json`)."""
        return {"run_dir": str(self.run_dir), "results_dir": str(self.results_dir), "interrupted": self.interrupted,
                "categories": [asdict(c) for c in self.categories]}


def select_category_tasks(config: SingleTurnRunConfig, category: str) -> list[SingleTurnTask]:
    """The tasks of `category` chosen by ids / ids file / count (ids of other categories are ignored when
    several categories run)."""
    ids = list(config.ids) if config.ids is not None else None
    if config.ids_file is not None:
        ids = read_ids_file(config.ids_file)
    if ids is not None and len(config.categories) > 1:
        ids = [i for i in ids if category_of_id(i) == category]
        if not ids:
            return []
    tasks = load_tasks(category, ids=ids, num_tasks=config.num_tasks)
    return [t for t in tasks if isinstance(t, SingleTurnTask)]


class _Category:
    """Book-keeping of one category while its tasks run."""

    def __init__(self, report: CategoryReport, writer: ResultWriter, run_dir: RunDirectory, bar: tqdm | None,
                 verbose: bool) -> None:
        self.report = report
        self.writer = writer
        self.run_dir = run_dir
        self.bar = bar
        self.verbose = verbose

    def done(self, task: SingleTurnTask, outcome: TaskOutcome) -> None:
        """Record one finished task (result line, trace, running accuracy)."""
        report = self.report
        valid: bool | None = None
        if outcome.record is None:
            report.untested += 1
        else:
            self.writer.append(outcome.record)
            report.finished += 1
            valid = score_single_turn(task, outcome.record.result).valid
            report.correct += int(valid)
            best = outcome.trace.get("best")
            report.recovered += int(valid and outcome.status == "success" and bool(best))
        outcome.trace["valid"] = valid
        self.run_dir.append_trace(report.category, outcome.trace)
        if self.verbose:
            message = (f"{task.id}: {outcome.status}, attempts {len(outcome.trace.get('attempts', []))}, "
                       f"best {outcome.trace.get('best')}, {'correct' if valid else 'wrong' if valid is False else '-'}")
            (self.bar.write if self.bar is not None else print)(message)
        self.tick()

    def crashed(self, task: SingleTurnTask, error: BaseException) -> None:
        """Record a task that raised unexpectedly."""
        self.report.crashed += 1
        text = "".join(traceback.format_exception(error))
        log.error("task %s crashed:\n%s", task.id, text)
        self.run_dir.append_trace(self.report.category, {"id": task.id, "status": "crashed", "error": text})
        self.tick()

    def tick(self) -> None:
        if self.bar is None:
            return
        report = self.report
        accuracy = report.correct / report.finished if report.finished else 0.0
        postfix = {"acc": f"{accuracy:.3f}", "ok": f"{report.correct}/{report.finished}"}
        if report.untested or report.crashed:
            postfix["untested"] = str(report.untested + report.crashed)
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)


async def _run_category(
    tasks: Sequence[SingleTurnTask], state: _Category, make_agent: AgentFactory, client: GeckoClient,
    config: SingleTurnRunConfig, run_label: str,
) -> None:
    queue: asyncio.Queue[SingleTurnTask] = asyncio.Queue()
    for task in tasks:
        queue.put_nowait(task)
    gats_config = config.gats()

    async def worker() -> None:
        while not queue.empty():
            task = queue.get_nowait()
            try:
                outcome = await run_single_task(task, make_agent(task), client, gats_config,
                                                labels={"run": run_label})
            except Exception as exc:  # a bug in one task must not cost the others; reported, never scored
                if config.debug:
                    raise
                state.crashed(task, exc)
                continue
            state.done(task, outcome)

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, min(config.workers, len(tasks)))):
            group.create_task(worker())


def _score(category: str, path: Path, model: str, output_dir: Path, report: CategoryReport) -> None:
    records = read_results(path)
    if not records:
        return
    partial = len(records) < report.dataset_size
    summaries = evaluate_files([ResultFile(model_dir_name(model), category, path)], score_dir(output_dir),
                               partial=partial)
    score = summaries[0].categories[category]
    report.accuracy, report.scored = score.accuracy, score.total


def _llm_client(config: SingleTurnRunConfig) -> LLMClient | None:
    if is_scripted(config.model):
        return None
    return create_client(cache_path=config.llm_cache, cache_enabled=config.llm_cache is not None)


def _record_config(run_dir: RunDirectory, config: SingleTurnRunConfig, health: HealthInfo) -> None:
    flags = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items() if k != "gecko_api_key"}
    roles = {role: info.model_dump() for role, info in health.roles.items()}
    run_dir.record_config({
        "benchmark": "bfcl", "mode": "single_turn", "config": flags,
        "models": {"planner": config.model, **{role: info["model"] for role, info in roles.items()}},
        "gecko": {"url": config.gecko_url, "version": health.version, "roles": roles, "store": health.store,
                  "toolkits": health.toolkits, "state_model_enabled": health.state_model_enabled},
        "gats": asdict(config.gats()), "agent": asdict(config.agents()),
    })


async def run_single_turn(config: SingleTurnRunConfig) -> RunReport:
    """Run the selected tasks of every category; see the module docstring.

    Raises:
        PreflightError: Gecko or the model is not set up for the run (nothing has run yet).
        TaskSelectionError, UnknownCategoryError: bad selection.
        FileExistsError: a result file exists and `resume` is off.
    """
    selected = {category: select_category_tasks(config, category) for category in config.categories}
    if not config.resume:
        for category in selected:
            path = result_path(results_dir(config.output_dir), config.model, category)
            if path.exists() and path.stat().st_size:
                raise FileExistsError(f"{path} already has results; pass --resume to continue it, "
                                      "or choose another --output-dir")
    first = next((tasks[0].id for tasks in selected.values() if tasks), None)
    client = GeckoClient(config.gecko_url, max_connections=max(8, config.workers * 2), api_key=config.gecko_api_key)
    llm: LLMClient | None = None
    try:
        health = await preflight(client, config.model, first)
        llm = _llm_client(config)
        make_agent = agent_factory(config.agents(), llm)
        run_dir = RunDirectory(config.output_dir, config.model)
        handler = _attach_log(run_dir.path / "run.log", config.debug)
        _record_config(run_dir, config, health)
        report = RunReport(run_dir.path, results_dir(config.output_dir))
        try:
            for category, tasks in selected.items():
                await _category(category, tasks, config, run_dir, report, make_agent, client)
        except asyncio.CancelledError:
            report.interrupted = True
            raise
        finally:
            run_dir.write_json("summary.json", report.public())
            _detach_log(handler)
        return report
    finally:
        await client.aclose()
        if llm is not None:
            await llm.aclose()


async def _category(
    category: str, tasks: list[SingleTurnTask], config: SingleTurnRunConfig, run_dir: RunDirectory,
    report: RunReport, make_agent: AgentFactory, client: GeckoClient,
) -> None:
    path = result_path(results_dir(config.output_dir), config.model, category)
    entry = CategoryReport(category, str(path), selected=len(tasks), dataset_size=_dataset_size(category))
    report.categories.append(entry)
    started = time.perf_counter()
    with ResultWriter(path, resume=config.resume) as writer:
        pending = [task for task in tasks if task.id not in writer]
        entry.skipped = len(tasks) - len(pending)
        bar = tqdm(total=len(pending), desc=category, unit="task", dynamic_ncols=True,
                   disable=not config.progress or not pending)
        state = _Category(entry, writer, run_dir, bar, config.verbose)
        try:
            await _run_category(pending, state, make_agent, client, config, run_dir.path.name)
        finally:
            bar.close()
            entry.seconds = round(time.perf_counter() - started, 3)
    _score(category, path, config.model, config.output_dir, entry)


def _dataset_size(category: str) -> int:
    return len(load_category(category))


_LOGGERS = ("benchmarks", "gats", "inference")


def _attach_log(path: Path, debug: bool) -> logging.Handler:
    """Send our packages' log records to the run's `run.log` (not httpx's per-request lines)."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.DEBUG if debug else logging.INFO)
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG if debug else logging.INFO)
    return handler


def _detach_log(handler: logging.Handler) -> None:
    for name in _LOGGERS:
        logging.getLogger(name).removeHandler(handler)
    handler.close()
