"""Batch runner of BFCL multi-turn: selection, concurrency, resume, progress, run directory, official scoring.

Same contract as the single-turn runner (`batch.py`): one result file per category, one durable line per
finished task, `resume=True` skips ids already written, untested tasks get no line (a resume retries them),
a crash of one task is recorded and costs no other. Each finished line is scored at once with the official
multi-turn checker (fresh instance names per entry, see `checker.check_multi_turn`) for the running
accuracy, and the whole file is scored again at the end (`evaluate.evaluate_files`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm import tqdm

from benchmarks.bfcl.agents import is_scripted
from benchmarks.bfcl.batch import CategoryReport, RunConfig, RunReport
from benchmarks.bfcl.evaluate import ResultFile, evaluate_files
from benchmarks.bfcl.export import ResultWriter, model_dir_name, read_results, result_path
from benchmarks.bfcl.loader import MultiTurnTask, load_category, load_tasks, read_ids_file
from benchmarks.bfcl.multi_agents import TurnAgentsFactory, multi_turn_agents
from benchmarks.bfcl.multi_preflight import multi_preflight
from benchmarks.bfcl.multi_turn import MultiTaskOutcome, run_multi_task
from benchmarks.bfcl.rundir import RunDirectory, results_dir, score_dir
from benchmarks.bfcl.scoring import score_multi_turn
from inference.gecko import GeckoClient, HealthInfo
from utils.llm import LLMClient, create_client

log = logging.getLogger("benchmarks.bfcl")
SUPPORTED_CATEGORIES: tuple[str, ...] = (
    "multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


@dataclass(frozen=True)
class MultiTurnRunConfig(RunConfig):
    """Everything a multi-turn run needs (built by `run_bfcl_multi.py` from its flags)."""

    max_steps: int = 20
    """Planner steps per run (the official per-turn limit is 20)."""
    generate_checklist: bool = True
    """A dynamic checklist per turn (the judge model's; with `rules` it is the request itself)."""


def select_multi_tasks(config: MultiTurnRunConfig, category: str) -> list[MultiTurnTask]:
    """The selected tasks of `category` (ids / ids file / count)."""
    ids = list(config.ids) if config.ids is not None else None
    if config.ids_file is not None:
        ids = read_ids_file(config.ids_file)
    if ids is not None and len(config.categories) > 1:
        ids = [i for i in ids if i.startswith(category + "_")]
        if not ids:
            return []
    return [t for t in load_tasks(category, ids=ids, num_tasks=config.num_tasks) if isinstance(t, MultiTurnTask)]


class _Progress:
    """Book-keeping of one category while its tasks run."""

    def __init__(self, report: CategoryReport, writer: ResultWriter, run_dir: RunDirectory, bar: tqdm,
                 verbose: bool) -> None:
        self.report, self.writer, self.run_dir, self.bar, self.verbose = report, writer, run_dir, bar, verbose

    def done(self, task: MultiTurnTask, outcome: MultiTaskOutcome) -> None:
        report = self.report
        valid: bool | None = None
        if outcome.record is None:
            report.untested += 1
        else:
            self.writer.append(outcome.record)
            report.finished += 1
            score = score_multi_turn(task, outcome.record.result)
            valid = score.valid
            report.correct += int(valid)
            outcome.trace["score"] = {"valid": score.valid, "error_type": score.error_type}
        outcome.trace["valid"] = valid
        self.run_dir.append_trace(report.category, outcome.trace)
        if self.verbose:
            verdict = "correct" if valid else "wrong" if valid is False else "-"
            self.bar.write(f"{task.id}: {outcome.status}, {verdict}" + (
                f" ({outcome.trace.get('error')})" if outcome.status == "untested" else ""))
        self.tick()

    def crashed(self, task: MultiTurnTask, error: BaseException) -> None:
        self.report.crashed += 1
        text = "".join(traceback.format_exception(error))
        log.error("task %s crashed:\n%s", task.id, text)
        self.run_dir.append_trace(self.report.category, {"id": task.id, "status": "crashed", "error": text})
        self.tick()

    def tick(self) -> None:
        report = self.report
        accuracy = report.correct / report.finished if report.finished else 0.0
        postfix = {"acc": f"{accuracy:.3f}", "ok": f"{report.correct}/{report.finished}"}
        if report.untested or report.crashed:
            postfix["untested"] = str(report.untested + report.crashed)
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)


async def _run_tasks(tasks: Sequence[MultiTurnTask], progress: _Progress, make_agents: TurnAgentsFactory,
                     client: GeckoClient, config: MultiTurnRunConfig, run_label: str) -> None:
    queue: asyncio.Queue[MultiTurnTask] = asyncio.Queue()
    for task in tasks:
        queue.put_nowait(task)
    gats_config = config.gats()

    async def worker() -> None:
        while not queue.empty():
            task = queue.get_nowait()
            try:
                outcome = await run_multi_task(task, make_agents(task), client, gats_config, labels={"run": run_label})
            except Exception as exc:  # a bug in one task must not cost the others; reported, never scored
                if config.debug:
                    raise
                progress.crashed(task, exc)
                continue
            progress.done(task, outcome)

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, min(config.workers, len(tasks)))):
            group.create_task(worker())


def _score(category: str, path: Path, model: str, output_dir: Path, report: CategoryReport) -> None:
    records = read_results(path)
    if not records:
        return
    summaries = evaluate_files([ResultFile(model_dir_name(model), category, path)], score_dir(output_dir),
                               partial=len(records) < report.dataset_size)
    score = summaries[0].categories[category]
    report.accuracy, report.scored = score.accuracy, score.total


def _record_config(run_dir: RunDirectory, config: MultiTurnRunConfig, health: HealthInfo) -> None:
    flags = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items() if k != "gecko_api_key"}
    roles = {role: info.model_dump() for role, info in health.roles.items()}
    run_dir.record_config({
        "benchmark": "bfcl", "mode": "multi_turn", "config": flags,
        "models": {"planner": config.model, **{role: info["model"] for role, info in roles.items()}},
        "gecko": {"url": config.gecko_url, "version": health.version, "roles": roles, "store": health.store,
                  "toolkits": health.toolkits, "state_model_enabled": health.state_model_enabled},
        "gats": asdict(config.gats()), "agent": asdict(config.agents()),
    })


async def run_multi_turn(config: MultiTurnRunConfig, *, client: GeckoClient | None = None) -> RunReport:
    """Run the selected tasks of every category; see the module docstring.

    Args:
        config: The run.
        client: A Gecko client to use (benches pass a counting one); default: one built from the config.

    Raises:
        PreflightError: Gecko or the model is not set up for the run (nothing has run yet).
        TaskSelectionError, UnknownCategoryError: bad selection.
        FileExistsError: a result file exists and `resume` is off.
    """
    unsupported = [c for c in config.categories if c not in SUPPORTED_CATEGORIES]
    if unsupported:
        raise ValueError(f"not a multi-turn category: {', '.join(unsupported)}; choose from "
                         f"{', '.join(SUPPORTED_CATEGORIES)}")
    selected = {category: select_multi_tasks(config, category) for category in config.categories}
    if not config.resume:
        for category in selected:
            path = result_path(results_dir(config.output_dir), config.model, category)
            if path.exists() and path.stat().st_size:
                raise FileExistsError(f"{path} already has results; pass --resume to continue it, "
                                      "or choose another --output-dir")
    own_client = client is None
    gecko = client or GeckoClient(config.gecko_url, max_connections=max(8, config.workers * 2),
                                  api_key=config.gecko_api_key)
    llm: LLMClient | None = None
    try:
        classes = {name for tasks in selected.values() for task in tasks for name in task.involved_classes}
        health = await multi_preflight(gecko, config.model, sorted(classes))
        if not is_scripted(config.model):
            llm = create_client(cache_path=config.llm_cache, cache_enabled=config.llm_cache is not None)
        make_agents = multi_turn_agents(config.agents(), llm)
        run_dir = RunDirectory(config.output_dir, config.model)
        _record_config(run_dir, config, health)
        report = RunReport(run_dir.path, results_dir(config.output_dir))
        try:
            for category, tasks in selected.items():
                await _category(category, tasks, config, run_dir, report, make_agents, gecko)
        except asyncio.CancelledError:
            report.interrupted = True
            raise
        finally:
            run_dir.write_json("summary.json", report.public())
        return report
    finally:
        if own_client:
            await gecko.aclose()
        if llm is not None:
            await llm.aclose()


async def _category(category: str, tasks: list[MultiTurnTask], config: MultiTurnRunConfig, run_dir: RunDirectory,
                    report: RunReport, make_agents: TurnAgentsFactory, client: GeckoClient) -> None:
    path = result_path(results_dir(config.output_dir), config.model, category)
    entry = CategoryReport(category, str(path), selected=len(tasks), dataset_size=len(load_category(category)))
    report.categories.append(entry)
    started = time.perf_counter()
    with ResultWriter(path, resume=config.resume) as writer:
        pending = [task for task in tasks if task.id not in writer]
        entry.skipped = len(tasks) - len(pending)
        bar = tqdm(total=len(pending), desc=category, unit="task", dynamic_ncols=True,
                   disable=not config.progress or not pending)
        try:
            await _run_tasks(pending, _Progress(entry, writer, run_dir, bar, config.verbose), make_agents, client,
                             config, run_dir.path.name)
        finally:
            bar.close()
            entry.seconds = round(time.perf_counter() - started, 3)
    _score(category, path, config.model, config.output_dir, entry)
