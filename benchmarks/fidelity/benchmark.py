"""`gecko fidelity`: the fidelity harness on the shared runner.

```
select    sources × tasks[:num_tasks] × kinds (gold | perturbed | noisy)   → one work item per trajectory
          + one per REST toolkit (`rest`)                                   → key <source>/<task>/<kind>, rest/<toolkit>
preflight Gecko's /health (its engines are recorded) and the sources' toolkits (the tool catalogs)
run       execute.run_trajectory (real tools and Gecko, step-wise and rollout, judge) | consistency.check_toolkit
finish    report.build_report over every record → <run dir>/fidelity.json and fidelity.md
```

Gecko runs with whatever engines it was started with; `--gecko-url auto` starts one on the sources' toolkits with
the engines given by `--engine` or the per-role flags (default: the rules engines, the offline baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.fidelity.consistency import check_toolkit
from benchmarks.fidelity.execute import SchemaChecks, run_trajectory
from benchmarks.fidelity.model import (
    TRAJECTORY_KINDS,
    FidelitySource,
    Trajectory,
    TrajectoryKind,
    trajectory_key,
)
from benchmarks.fidelity.perturb import noisy, perturbed, resolve
from benchmarks.fidelity.report import build_report, headline, render_markdown
from benchmarks.fidelity.sources import REST, SOURCE_NAMES, SourceOptions, build_source
from benchmarks.runner import (
    Evaluation,
    LedgerEntry,
    LocalGecko,
    OfficialCheck,
    PreflightError,
    RunContext,
    RunOptions,
    TaskOutcome,
    WorkItem,
    add_selection_arguments,
    selected_ids,
)
from inference.agents.noise import DEFAULT_ERROR_RATE
from inference.gecko import GeckoClient, GeckoError, GeckoNotFoundError
from inference.tools.catalog import ToolCatalog
from utils.paths import EXAMPLE_TOOLKITS_DIR

REPORT_JSON = "fidelity.json"
REPORT_MARKDOWN = "fidelity.md"
ROLE_FLAGS = ("validation", "response", "state", "judge")
"""Gecko's server roles; `--<role>-model` sets one for `--gecko-url auto`."""
DOCUMENT_SUFFIXES = (".json", ".yaml", ".yml")


def _csv(text: str, known: Sequence[str], what: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"unknown {what} {', '.join(unknown) or '(none)'}; choose from {', '.join(known)}")
    return names


def rest_toolkits(dirs: Sequence[Path]) -> list[str]:
    """Toolkit names (file stems) of the documents in `dirs`."""
    return [path.stem for directory in dirs if directory.is_dir() for path in sorted(directory.iterdir())
            if path.suffix.lower() in DOCUMENT_SUFFIXES]


class FidelityBenchmark:
    """One fidelity run: trajectories on real tools and in Gecko, and REST consistency checks."""

    name: ClassVar[str] = "fidelity"
    default_gecko_url: ClassVar[str | None] = None
    default_workers: ClassVar[int] = 8
    offline_models: ClassVar[tuple[str, ...]] = ()
    needs_gecko = True

    def __init__(self, *, sources: Sequence[str] = SOURCE_NAMES, kinds: Sequence[str] = TRAJECTORY_KINDS,
                 seed: int = 0, error_rate: float = DEFAULT_ERROR_RATE, judge: bool = True,
                 source_options: SourceOptions | None = None, rest_dirs: Sequence[Path] = (EXAMPLE_TOOLKITS_DIR,),
                 engines: Mapping[str, str] | None = None, ids: Sequence[str] | None = None,
                 num_tasks: int | None = None, print_json: bool = False, options: RunOptions | None = None) -> None:
        if not 0.0 <= error_rate <= 1.0:
            raise ValueError(f"--error-rate must be in [0, 1], got {error_rate}")
        if num_tasks is not None and num_tasks < 0:
            raise ValueError("--num-tasks must be >= 0")
        self.sources = tuple(sources)
        self.kinds = tuple(kinds)
        self.seed, self.error_rate, self.judge = seed, error_rate, judge
        self.source_options = source_options or SourceOptions()
        self.rest_dirs = tuple(Path(d) for d in rest_dirs)
        self.engines = dict(engines or {})
        self.ids = tuple(ids) if ids else None
        self.num_tasks = num_tasks
        self.print_json = print_json
        self.options = options
        self._built: dict[str, FidelitySource] = {}
        self._catalogs: dict[str, ToolCatalog] = {}
        self._client: GeckoClient | None = None
        self._labels: dict[str, str] = {}
        self._schemas = SchemaChecks()

    # --- command line ---------------------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The harness's own flags."""
        parser.add_argument("--sources", default=",".join(SOURCE_NAMES),
                            help=f"comma-separated, from {', '.join(SOURCE_NAMES)} (default all)")
        parser.add_argument("--kinds", default=",".join(TRAJECTORY_KINDS),
                            help="trajectory kinds: gold, perturbed (one seeded error each), noisy (the scripted "
                                 "noisy agent's calls); default all")
        parser.add_argument("--seed", type=int, default=0, help="seed of the perturbations and the noisy agent")
        parser.add_argument("--error-rate", type=float, default=DEFAULT_ERROR_RATE,
                            help=f"the noisy agent's error rate (default {DEFAULT_ERROR_RATE})")
        parser.add_argument("--bfcl-category", default="multi_turn_base", help="BFCL multi-turn category")
        parser.add_argument("--task-set", choices=("v1", "v0"), default="v1", help="tau2 task set")
        parser.add_argument("--rest-dir", type=Path, action="append", metavar="DIR",
                            help=f"toolkits of the REST consistency checks (repeatable; default {EXAMPLE_TOOLKITS_DIR})")
        parser.add_argument("--no-judge", action="store_true", help="skip the judge comparison")
        parser.add_argument("--json", action="store_true", help="print the whole report as JSON at the end")
        engines = parser.add_argument_group("Gecko's engines (for --gecko-url auto)")
        engines.add_argument("--engine", metavar="MODEL",
                             help="every role's engine: rules (default), or a model alias such as "
                                  "openai-compatible:<model>@<base_url>")
        for role in ROLE_FLAGS:
            engines.add_argument(f"--{role}-model", metavar="MODEL", help=f"the {role} role's engine (overrides --engine)")
        add_selection_arguments(parser, ids_help="trajectory keys (<source>/<task>/<kind>, rest/<toolkit>) or task ids")

    @classmethod
    def from_args(cls, args: argparse.Namespace, options: RunOptions) -> FidelityBenchmark:
        """The run for parsed flags.

        Raises:
            ValueError: Unknown sources or kinds, a bad error rate.
        """
        engines = {role: getattr(args, f"{role}_model") or args.engine for role in ROLE_FLAGS}
        return cls(sources=_csv(args.sources, SOURCE_NAMES, "sources"), kinds=_csv(args.kinds, TRAJECTORY_KINDS, "kinds"),
                   seed=args.seed, error_rate=args.error_rate, judge=not args.no_judge,
                   source_options=SourceOptions(args.bfcl_category, args.task_set),
                   rest_dirs=args.rest_dir or (EXAMPLE_TOOLKITS_DIR,),
                   engines={k: v for k, v in engines.items() if v}, ids=selected_ids(args), num_tasks=args.num_tasks,
                   print_json=args.json, options=options)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], options: RunOptions) -> FidelityBenchmark:
        """The run recorded in a run directory.

        Raises:
            ValueError: The record is not a fidelity run's.
        """
        try:
            return cls(sources=config["sources"], kinds=config["kinds"], seed=int(config["seed"]),
                       error_rate=float(config["error_rate"]), judge=bool(config["judge"]),
                       source_options=SourceOptions(**config["source_options"]),
                       rest_dirs=[Path(p) for p in config["rest_dirs"]], engines=config.get("engines") or {},
                       ids=config.get("ids"), num_tasks=config.get("num_tasks"), options=options)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a fidelity run's config: {exc}") from exc

    # --- the run ---------------------------------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """Everything that defines the run."""
        return {"sources": list(self.sources), "kinds": list(self.kinds), "seed": self.seed,
                "error_rate": self.error_rate, "judge": self.judge,
                "source_options": {"bfcl_category": self.source_options.bfcl_category,
                                   "task_set": self.source_options.task_set},
                "rest_dirs": [str(d) for d in self.rest_dirs], "engines": self.engines,
                "ids": list(self.ids) if self.ids else None, "num_tasks": self.num_tasks}

    def result_settings(self) -> dict[str, Any]:
        """What changes results: seeds, error rate, judge, data versions, engines asked for."""
        config = self.config()
        return {k: config[k] for k in ("seed", "error_rate", "judge", "source_options", "engines")}

    def run_label(self) -> str:
        """`fidelity_<engine>`."""
        engine = "-".join(sorted(set(self.engines.values()))) or "rules"
        return "fidelity_" + "".join(c if c.isalnum() or c in "-." else "-" for c in engine)[:60]

    def models(self) -> dict[str, str]:
        """The harness calls no LLM itself (Gecko does)."""
        return {}

    def source(self, name: str) -> FidelitySource:
        """The source `name` (built on first use)."""
        if name not in self._built:
            self._built[name] = build_source(name, self.source_options)
        return self._built[name]

    def _trajectory_sources(self) -> list[str]:
        return [name for name in self.sources if name != REST]

    def local_gecko(self) -> LocalGecko:
        """Gecko on the sources' toolkits and the REST directories, with the engines asked for."""
        dirs = [d for name in self._trajectory_sources() for d in self.source(name).schemas_dirs()]
        if REST in self.sources:
            dirs += list(self.rest_dirs)
        args = [arg for role, model in self.engines.items() for arg in (f"--{role}-model", model)]
        return LocalGecko(tuple(dict.fromkeys(dirs)), tuple(args), workers=2)

    def _wanted(self, source: str, task_id: str, kind: str | None) -> bool:
        if self.ids is None:
            return True
        keys = {task_id, f"{source}/{task_id}"} | ({trajectory_key(source, task_id, kind)} if kind else set())
        return bool(keys & set(self.ids))

    def select(self) -> list[WorkItem]:
        """One item per trajectory (source × task × kind) and per REST toolkit.

        Raises:
            ValueError: No REST directory exists, or an id selects nothing.
        """
        items = []
        for name in self._trajectory_sources():
            source = self.source(name)
            tasks = [t for t in source.tasks() if any(self._wanted(name, t, k) for k in self.kinds)]
            for task_id in tasks[: self.num_tasks]:
                items += [WorkItem(trajectory_key(name, task_id, kind), name, (name, task_id, kind))
                          for kind in self.kinds if self._wanted(name, task_id, kind)]
        if REST in self.sources:
            missing = [str(d) for d in self.rest_dirs if not d.is_dir()]
            if missing:
                raise ValueError(f"--rest-dir {', '.join(missing)} is not a directory")
            names = [n for n in rest_toolkits(self.rest_dirs) if self._wanted(REST, n, None)]
            items += [WorkItem(f"{REST}/{n}", REST, (REST, n, None)) for n in names[: self.num_tasks]]
        if not items:
            raise ValueError("the selection is empty")
        return items

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> dict[str, Any]:
        """Gecko answers, serves every toolkit needed; the tool catalogs. Returns Gecko's version and engines.

        Raises:
            PreflightError: Gecko is down or lacks a toolkit.
        """
        self._client = client = context.gecko()
        self._labels = {"run": context.run_name}
        try:
            health = await client.health()
            for name in sorted({item.group for item in items} - {REST}):
                listings = [await client.toolkit(tk) for tk in self.source(name).toolkits()]
                self._catalogs[name] = ToolCatalog.from_toolkits(listings)
            for item in items:
                if item.group == REST:
                    await client.toolkit(item.task[1])
        except GeckoNotFoundError as exc:
            dirs = " ".join(f"--schemas-dir {d}" for d in self.local_gecko().schemas_dirs)
            raise PreflightError(f"{exc}; start Gecko with {dirs}, or run with --gecko-url auto") from exc
        except GeckoError as exc:
            raise PreflightError(f"Gecko at {context.gecko_url} is not usable: {exc}; start it (gecko serve) or "
                                 "run with --gecko-url auto") from exc
        for name in self._catalogs:
            await asyncio.to_thread(self.source(name).warm_up)
        # The sources' data (tau2's parsed DB JSON: ~10^6 objects) lives for the whole run: keep it out of every
        # later garbage collection, which would otherwise scan it again after each fresh DB.
        gc.freeze()
        roles = {role: info.model_dump() for role, info in health.roles.items()}
        return {"gecko": {"version": health.version, "roles": roles, "store": health.store,
                          "toolkits": health.toolkits}}

    def _trajectory(self, source_name: str, task_id: str, kind: TrajectoryKind) -> Trajectory | None:
        source, catalog = self.source(source_name), self._catalogs[source_name]
        gold = source.gold(task_id)
        notes: list[str] = []
        if kind == "gold":
            calls = resolve(gold, catalog)
        elif kind == "perturbed":
            calls, note = perturbed(gold, catalog, key=task_id, seed=self.seed)
            if note is None:
                return None
            notes = [note]
        else:
            calls, notes = noisy(gold, catalog, key=task_id, seed=self.seed, error_rate=self.error_rate)
        return Trajectory(source_name, task_id, kind, tuple(calls), source.task_toolkits(task_id), tuple(notes))

    async def run(self, item: WorkItem) -> TaskOutcome:
        """One trajectory (or one REST toolkit's checks); Gecko failures make it untested."""
        assert self._client is not None, "preflight() runs first"
        source_name, task_id, kind = item.task
        try:
            if source_name == REST:
                record = await check_toolkit(self._client, task_id, labels=self._labels)
                checks = record["checks"]
                score = sum(1 for c in checks if c["consistent"]) / len(checks) if checks else None
                return TaskOutcome("done", score=score, record=record, trace=record,
                                   info={"checks": len(checks)})
            trajectory = await asyncio.to_thread(self._trajectory, source_name, task_id, kind)
            if trajectory is None:
                return TaskOutcome("done", record={"source": source_name, "task": task_id, "kind": kind,
                                                   "skipped": "no perturbation applies to its calls"},
                                   note="skipped: nothing to perturb")
            run = await run_trajectory(trajectory, self.source(source_name), self._catalogs[source_name],
                                       self._client, judge=self.judge, labels=self._labels, schemas=self._schemas,
                                       keep_sessions=bool(self.options and self.options.debug))
        except GeckoError as exc:
            return TaskOutcome("untested", reason=f"Gecko: {exc}")
        steps = run.record["steps"]
        agree = [s["real_error"] == s["gecko_error"] and (s["state"] is None or
                                                          s["state"]["matched"] == s["state"]["fields"])
                 for s in steps]
        return TaskOutcome("done", score=sum(agree) / len(agree) if agree else None, record=run.record,
                           info={"steps": len(steps), "judge": run.record["judge"]}, trace=run.trace)

    def finish(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        """`fidelity.json` and `fidelity.md` from every done record."""
        records = [e.record for e in entries if e.status == "done" and isinstance(e.record, dict)]
        report = build_report(records)
        report["config"] = self.config()
        (run_dir / REPORT_JSON).write_text(json.dumps(report, indent=1), encoding="utf-8")
        (run_dir / REPORT_MARKDOWN).write_text(render_markdown(report), encoding="utf-8")
        summary = headline(report)
        lines = [f"fidelity: {json.dumps(summary)}", f"report: {run_dir / REPORT_JSON}, {run_dir / REPORT_MARKDOWN}"]
        if self.print_json:
            lines.append(json.dumps(report))
        return Evaluation(summary, tuple(lines))

    def official_check(self, entries: Sequence[LedgerEntry], run_dir: Path) -> OfficialCheck:
        """No official tool scores a fidelity run (its figures compare Gecko with the real tools, and the official
        BFCL and tau2 graders already judge every step inside the run): says so instead of checking."""
        done = sum(entry.status == "done" for entry in entries)
        return OfficialCheck(notes=(f"the fidelity harness has no official scorer of its own: its {done} done "
                                    f"trajectories were judged by the official graders during the run "
                                    f"({run_dir / REPORT_JSON})",))
