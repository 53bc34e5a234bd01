"""`gecko bfcl-memory`: the BFCL V4 memory categories on the shared runner.

```
select    memory_<backend> × questions (ids | all)[:num_tasks]           → WorkItem(question id, category, MemoryTask)
preflight Gecko's /health and the memory toolkits; each backend's class imports (memory_vector needs FAISS and
          all-MiniLM-L6-v2: without them its tasks are untested, never scored 0); the agents
run       the scenario's prerequisite conversations, once per run and in order (the first question of a scenario
          plays them; the others wait), then the question: each turn GATS on Gecko, then the real memory class
          (`memory_run.py`)
finish    result/<model>/agentic/memory/<backend>/BFCL_v4_memory_<backend>_result.json (+ `_prereq_result.json` and
          `memory_snapshot/`, as `bfcl generate` leaves them), scored by `memory.score_memory`
```

A resumed run plays the prerequisites again (with an LLM, `--llm-cache` answers them as before).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar, cast

from pydantic import Field

from benchmarks.bfcl.agents import is_scripted
from benchmarks.bfcl.benchmark import _Bfcl
from benchmarks.bfcl.categories import MEMORY_CATEGORIES, category_dir, result_file_name
from benchmarks.bfcl.export import ResultRecord, dedupe_records, model_dir_name, write_results
from benchmarks.bfcl.loader import BfclTask, select_tasks
from benchmarks.bfcl.memory import MemoryTask, backend_problem, load_memory_tasks, memory_class, score_memory
from benchmarks.bfcl.memory_oracle import oracle_agents
from benchmarks.bfcl.memory_run import PlayedEntry, Rehearsal, TurnAgentsFor, play_entry, play_prereqs
from benchmarks.bfcl.multi_agents import MULTI_TURN_SYSTEM_PROMPT
from benchmarks.bfcl.official import OFFICIAL_HANDLER, OFFICIAL_SCORE_DIR, check_against_official
from benchmarks.bfcl.preflight import check_multi_turn_health
from benchmarks.bfcl.run_config import BfclRunConfig
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.runner import (
    Evaluation,
    LedgerEntry,
    LocalGecko,
    OfficialCheck,
    RunContext,
    RunOptions,
    TaskOutcome,
    WorkItem,
)
from benchmarks.runner.gecko_check import check_gecko
from gats.turns import TurnAgents
from inference.agents import ORACLE_NAME

RESULT_DIR = "result"
MEMORY_OPENAPI_DIR = OPENAPI_DIR / "memory"
"""The memory classes' toolkits (`scripts/bfcl_memory_toolkits.py`, built by `make setup`)."""
MEMORY_GECKO = f"python run_gecko_server.py --schemas-dir {MEMORY_OPENAPI_DIR} --state-model rules"


class MemoryRunConfig(BfclRunConfig):
    """A BFCL memory run."""

    CATEGORIES: ClassVar[tuple[str, ...]] = MEMORY_CATEGORIES
    categories: tuple[str, ...] = Field(("memory_kv",), min_length=1)
    max_steps: int = Field(20, ge=1)
    """Planner steps per turn (the official per-turn limit is 20)."""


def memory_categories(name: str) -> tuple[str, ...]:
    """The categories named by `--category`: `all`/`memory`, a full name, or a backend (`kv`).

    Raises:
        ValueError: Not a memory category.
    """
    if name in ("all", "memory"):
        return MEMORY_CATEGORIES
    full = name if name.startswith("memory_") else f"memory_{name}"
    if full not in MEMORY_CATEGORIES:
        raise ValueError(f"{name!r} is not a memory category; choose from {', '.join(MEMORY_CATEGORIES)} or 'all'")
    return (full,)


def _no_group(group: str) -> tuple[str, ...]:
    raise ValueError(f"--group {group}: gecko bfcl-memory runs the memory categories only (--category memory)")


def memory_result_path(result_dir: Path, model: str, category: str, *, prereq: bool = False) -> Path:
    """Where `bfcl generate` puts a memory category's results (or its prerequisites' with `prereq`)."""
    name = result_file_name(f"{category}_prereq" if prereq else category)
    return result_dir / model_dir_name(model) / category_dir(category) / name


class BfclMemory(_Bfcl):
    """A BFCL memory run: prerequisites first, then each question, on the real memory classes."""

    name, config_type, category_default = "bfcl-memory", MemoryRunConfig, "memory_kv"
    needs_gecko = True
    categories_of = staticmethod(memory_categories)
    group_categories = staticmethod(_no_group)
    category_help = f"one of {', '.join(MEMORY_CATEGORIES)} (or kv, vector, rec_sum), or 'all' (default memory_kv)"

    def __init__(self, config: BfclRunConfig, options: RunOptions) -> None:
        super().__init__(config, options)
        if config.model not in (ORACLE_NAME,) and is_scripted(config.model):
            raise ValueError(f"{config.model} has no memory script; use scripted-oracle or an LLM")
        if config.faults is not None:
            raise ValueError("--faults is not supported for the memory categories yet")
        self._tasks: dict[str, list[MemoryTask]] = {}
        self._problems: dict[str, str | None] = {}
        self._prereqs: dict[tuple[str, str], asyncio.Task[list[PlayedEntry]]] = {}
        self._scratch: Path | None = None
        self._agents_for: TurnAgentsFor | None = None
        self._rehearsal: Rehearsal | None = None

    def _category_tasks(self, category: str) -> list[MemoryTask]:
        if category not in self._tasks:
            self._tasks[category] = load_memory_tasks(category)
        return self._tasks[category]

    def _dataset_size(self, category: str) -> int:
        return len(self._category_tasks(category))

    def select(self) -> list[WorkItem]:
        """The selected questions of every category (the prerequisites come with them)."""
        items: list[WorkItem] = []
        config = self.settings
        for category in config.categories:
            ids = list(config.ids) if config.ids is not None else None
            if ids is not None and len(config.categories) > 1:
                ids = [i for i in ids if i.startswith(category)]
                if not ids:
                    continue
            tasks = cast(Sequence[BfclTask], self._category_tasks(category))
            chosen = cast(list[MemoryTask], select_tasks(tasks, ids=ids, num_tasks=config.num_tasks))
            items += [WorkItem(task.id, category, task) for task in chosen]
        if not items:
            raise ValueError("the selection holds no task")
        return items

    def local_gecko(self) -> LocalGecko:
        """Gecko on the memory classes' toolkits with the rules state model."""
        return LocalGecko((MEMORY_OPENAPI_DIR,), ("--state-model", "rules"), workers=2)

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> dict[str, Any]:
        """Which backends import here; Gecko and the toolkits of those that do; the agents; a scratch directory for
        the memory snapshots."""
        for category in {item.group for item in items}:
            self._problems[category] = backend_problem(category)
        classes = sorted({memory_class(c) for c, problem in self._problems.items() if problem is None})
        client = context.gecko()
        health = await check_gecko(client, classes, MEMORY_GECKO, check_multi_turn_health) if classes else None
        if self.settings.model == ORACLE_NAME:
            self._agents_for = oracle_agents([item.task for item in items])
        else:
            planner = self.settings.agents().planner(context.llm(), MULTI_TURN_SYSTEM_PROMPT)
            self._agents_for = lambda entry: TurnAgents(simulated=lambda turn: planner,
                                                        real=lambda turn, plan: planner)
        self._rehearsal = Rehearsal(client, self.gats_config(), {"run": context.run_name})
        self._scratch = Path(tempfile.mkdtemp(prefix="bfcl-memory-"))
        return {"backends": {c: p or "ok" for c, p in sorted(self._problems.items())},
                "gecko": None if health is None else {"version": health.version, "toolkits": health.toolkits},
                "models": {"planner": self.settings.model}, "gats": asdict(self.gats_config())}

    def _snapshot_root(self) -> Path:
        assert self._scratch is not None, "preflight() runs first"
        return self._scratch / model_dir_name(self.settings.model)

    def _prereqs_of(self, task: MemoryTask) -> asyncio.Task[list[PlayedEntry]]:
        key = (task.category, task.scenario)
        if key not in self._prereqs:
            assert self._agents_for is not None and self._rehearsal is not None
            self._prereqs[key] = asyncio.ensure_future(
                play_prereqs(task.prereqs, self._agents_for, self._snapshot_root(), self._rehearsal))
        return self._prereqs[key]

    async def run(self, item: WorkItem) -> TaskOutcome:
        """The scenario's prerequisites (once), then the question, scored as `bfcl evaluate` scores it."""
        task: MemoryTask = item.task
        problem = self._problems.get(task.category)
        if problem:
            return TaskOutcome("untested", reason=f"backend_unavailable: {problem}", outage=False)
        prereqs = await asyncio.shield(self._prereqs_of(task))
        failed = next((p for p in prereqs if p.steps is None), None)
        if failed is not None or len(prereqs) != len(task.prereqs):
            return TaskOutcome("untested", reason=f"prerequisite {failed.entry.id if failed else '?'}: "
                                                  f"{failed.error if failed else 'not played'}")
        assert self._agents_for is not None and self._rehearsal is not None
        played = await play_entry(task.question, self._agents_for, self._snapshot_root(), self._rehearsal)
        trace: dict[str, Any] = {"id": task.id, "category": task.category, "scenario": task.scenario,
                                 "turns": list(played.trace)}
        if played.steps is None:
            return TaskOutcome("untested", reason=played.error, trace=trace, usage=played.usage)
        record = played.record()
        score = score_memory(task, record.result)
        trace["score"] = {"valid": score.valid, "error_type": score.error_type, "answer": score.decoded}
        return TaskOutcome("done", score=float(score.valid), record=record.model_dump(mode="json"), trace=trace,
                           usage=played.usage, note="correct" if score.valid else f"wrong ({score.error_type})")

    def _write_prereqs(self, results: Path) -> None:
        """The prerequisites' result lines and the memory snapshots, where `bfcl generate` leaves them."""
        for (category, _), future in sorted(self._prereqs.items()):
            if not future.done() or future.cancelled() or future.exception() is not None:
                continue
            records = [p.record() for p in future.result() if p.steps is not None]
            path = memory_result_path(results, self.settings.model, category, prereq=True)
            existing = [ResultRecord.model_validate_json(line) for line in path.read_text().splitlines()] \
                if path.exists() else []
            write_results(path, dedupe_records([*existing, *records]))
        if self._scratch is not None:
            for future in self._prereqs.values():
                future.cancel()  # an interrupted run's prerequisites still playing: their memory is not kept
            source = self._snapshot_root()
            if source.exists():
                shutil.copytree(source, results / model_dir_name(self.settings.model), dirs_exist_ok=True)
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def finish(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        """Result files of every category from the checkpoint, the prerequisites' files, and our scores."""
        results = run_dir / RESULT_DIR
        by_category: dict[str, list[ResultRecord]] = {}
        scores: dict[str, list[float]] = {}
        for entry in entries:
            if entry.status == "done" and entry.record is not None:
                by_category.setdefault(entry.group, []).append(ResultRecord.model_validate(entry.record))
                scores.setdefault(entry.group, []).append(float(entry.score or 0.0))
        paths = {}
        for category, records in by_category.items():
            paths[category] = memory_result_path(results, self.settings.model, category)
            write_results(paths[category], dedupe_records(records))
        self._write_prereqs(results)
        lines: tuple[str, ...] = (f"results: {results}",
                                  f"official: gecko score --official {run_dir}  (the bfcl CLI itself on these files)")
        metrics = {category: {"accuracy": sum(s) / len(s), "correct": int(sum(s)), "scored": len(s),
                              "dataset_size": self._dataset_size(category), "result_file": str(paths[category])}
                   for category, s in scores.items()}
        return Evaluation({"result_dir": str(results), "categories": metrics}, lines)

    def official_check(self, entries: Sequence[LedgerEntry], run_dir: Path) -> OfficialCheck:
        """`bfcl evaluate` itself on the run's result files: correct and scored counts per category, beside ours."""
        done: dict[str, list[float]] = {}
        for entry in entries:
            if entry.status == "done" and entry.score is not None:
                done.setdefault(entry.group, []).append(entry.score)
        return check_against_official(done, self._dataset_size, run_dir / RESULT_DIR, self.settings.model,
                                      run_dir / OFFICIAL_SCORE_DIR, (f"scored under {OFFICIAL_HANDLER}",))


def task_details(run_dir: Path, key: str, entry: dict[str, Any], trace: dict[str, Any]) -> dict[str, Any]:
    """A memory task's page in `gecko view`: our verdict with the answer it read, and the accepted answers."""
    score = trace.get("score") if isinstance(trace.get("score"), dict) else None
    official = None if score is None else {"checker": "bfcl-eval agentic_checker", **score}
    category = str(entry.get("group") or "")
    try:
        truth = next((list(t.question.ground_truth) for t in load_memory_tasks(category) if t.id == key), None)
    except ValueError:
        truth = None
    return {"official": official, "ground_truth": truth}
