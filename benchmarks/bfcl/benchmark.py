"""BFCL on the shared runner: `BfclSingleTurn` (`gecko bfcl`) and `BfclMultiTurn` (`gecko bfcl-multi`).

```
select   categories × (ids | all)[:num_tasks]            → WorkItem(task id, category, task)
preflight Gecko's /health and toolkits (preflight.py); agents for --model
run      single_turn.run_single_task | multi_turn.run_multi_task → result line, scored by the official checker
finish   <run dir>/result/<model>/<group>/BFCL_v4_<category>_result.json from the checkpoint,
         scored with the official checkers into <run dir>/score/<model>/ (evaluate.evaluate_files)
```

A task without a result line (Gecko or the LLM down, a failed multi-turn sync) is `untested`: not scored, rerun
by `--resume`.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.bfcl.agents import SCRIPTED_MODELS, AgentFactory, AgentSettings, agent_factory, is_scripted
from benchmarks.bfcl.categories import (
    AGENTIC_CATEGORIES,
    LEADERBOARD_GROUPS,
    LIVE_CATEGORIES,
    MULTI_TURN_CATEGORIES,
    NON_LIVE_CATEGORIES,
    SINGLE_TURN_CATEGORIES,
    category_of_id,
)
from benchmarks.bfcl.evaluate import ResultFile, evaluate_files
from benchmarks.bfcl.export import ResultRecord, dedupe_records, model_dir_name, result_path, write_results
from benchmarks.bfcl.leaderboard import Scored, leaderboard, sweep_lines
from benchmarks.bfcl.loader import MultiTurnTask, SingleTurnTask, WebSearchTask, load_category, load_tasks
from benchmarks.bfcl.multi_agents import TurnAgentsFactory, multi_turn_agents
from benchmarks.bfcl.multi_turn import MultiTaskOutcome, run_multi_task
from benchmarks.bfcl.official import (
    OFFICIAL_HANDLER,
    OFFICIAL_SCORE_DIR,
    check_against_official,
)
from benchmarks.bfcl.overall import overall_report
from benchmarks.bfcl.preflight import (
    MULTI_TURN_GECKO,
    SINGLE_TURN_GECKO,
    check_multi_turn_health,
    check_single_turn_health,
)
from benchmarks.bfcl.run_config import DEFAULT_MAX_RETRIES, BfclRunConfig, MultiTurnRunConfig
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.bfcl.scoring import EntryScore, score_entry, score_single_turn
from benchmarks.bfcl.single_turn import SingleTaskOutcome, run_single_task
from benchmarks.bfcl.web_search import missing_backend, with_web_search
from benchmarks.runner import (
    Evaluation,
    LedgerEntry,
    LocalGecko,
    OfficialCheck,
    RunContext,
    RunOptions,
    TaskOutcome,
    WorkItem,
    add_agent_backend_argument,
    add_model_argument,
    add_selection_arguments,
    require,
    selected_ids,
)
from benchmarks.runner.faults import (
    TaskFaults,
    add_fault_arguments,
    is_fault_arm,
    policy_from_args,
    with_fault_arm,
)
from benchmarks.runner.gecko_check import check_gecko
from gats import GatsConfig
from gats.turns import TurnAgents
from inference.agents import Agent, ContextBudget
from inference.agents.backends import context_budget
from inference.agents.noise import DEFAULT_ERROR_RATE
from inference.gecko import GeckoClient, HealthInfo
from utils.llm import LLMClient

RESULT_DIR = "result"
"""`<run dir>/result/`: the layout `bfcl evaluate --result-dir` reads."""
SCORE_DIR = "score"
"""`<run dir>/score/`: the score files."""


def single_turn_categories(name: str) -> tuple[str, ...]:
    """The categories named by `--category` of a single-turn run (`all` or one name).

    Raises:
        ValueError: Not a single-turn category.
    """
    if name == "all":
        return SINGLE_TURN_CATEGORIES
    if name not in SINGLE_TURN_CATEGORIES:
        raise ValueError(f"{name!r} is not a single-turn category; choose from {', '.join(SINGLE_TURN_CATEGORIES)} "
                         "or 'all'")
    return (name,)


def single_turn_group(group: str) -> tuple[str, ...]:
    """The categories of a leaderboard group that `gecko bfcl` runs (`--group non_live|live`).

    Raises:
        ValueError: A group this runner does not run (the message says which command does).
    """
    if group == "non_live":
        return NON_LIVE_CATEGORIES
    if group == "live":
        return LIVE_CATEGORIES
    if group in ("multi_turn", "agentic"):
        raise ValueError(f"the {group} group runs with `gecko bfcl-multi --group {group}` (a stateful Gecko)")
    raise ValueError(f"unknown group {group!r}; choose from {', '.join(LEADERBOARD_GROUPS)}")


def multi_turn_group(group: str) -> tuple[str, ...]:
    """The categories of a leaderboard group that `gecko bfcl-multi` runs (`--group multi_turn`).

    Raises:
        ValueError: A group this runner does not run.
    """
    if group == "multi_turn":
        return MULTI_TURN_CATEGORIES
    if group == "agentic":
        return AGENTIC_CATEGORIES
    if group in ("non_live", "live"):
        raise ValueError(f"the {group} group runs with `gecko bfcl --group {group}`")
    return single_turn_group(group)


def multi_turn_categories(name: str) -> tuple[str, ...]:
    """The categories named by `--category` of a multi-turn run (`all`, a full name, or one without the
    `multi_turn_` prefix).

    Raises:
        ValueError: Not a multi-turn category.
    """
    if name == "all":
        return MULTI_TURN_CATEGORIES
    if name in AGENTIC_CATEGORIES:
        return (name,)
    full = name if name.startswith("multi_turn_") else f"multi_turn_{name}"
    if full not in MULTI_TURN_CATEGORIES:
        raise ValueError(f"{name!r} is not a multi-turn or agentic category; choose from "
                         f"{', '.join(MULTI_TURN_CATEGORIES + AGENTIC_CATEGORIES)} or 'all'")
    return (full,)


def untested_reasons(entries: Sequence[LedgerEntry]) -> dict[str, tuple[int, str]]:
    """Category → (untested tasks, the last reason) over the checkpoint's entries (the fault arm left out)."""
    out: dict[str, tuple[int, str]] = {}
    for entry in entries:
        if entry.status == "untested" and not is_fault_arm(entry.key):
            count, _ = out.get(entry.group, (0, ""))
            out[entry.group] = (count + 1, entry.reason or "no reason recorded")
    return out


def with_leaderboard(evaluation: Evaluation, entries: Sequence[LedgerEntry], run_dir: Path) -> Evaluation:
    """`evaluation` with the sweep's leaderboard table under its lines: the V4 rows and weights over the categories
    it scored (`metrics["categories"]`), the untested ones listed with why."""
    categories = evaluation.metrics.get("categories")
    if not categories:
        return evaluation
    board = leaderboard({name: Scored(figures["accuracy"], figures["scored"]) for name, figures in categories.items()})
    return Evaluation(evaluation.metrics, (*evaluation.lines, *sweep_lines(board, untested_reasons(entries), run_dir)))


class _Bfcl:
    """What the single- and multi-turn runs share: selection, labels, the official files and their scores."""

    name: ClassVar[str]
    default_gecko_url: ClassVar[str | None] = None
    default_workers: ClassVar[int] = 8
    offline_models: ClassVar[tuple[str, ...]] = SCRIPTED_MODELS
    needs_gecko = True
    config_type: ClassVar[type[BfclRunConfig]]
    category_help: ClassVar[str]
    category_default: ClassVar[str | None]
    """None: `--category` is required."""

    @staticmethod
    def categories_of(name: str) -> tuple[str, ...]:
        """The categories named by `--category`."""
        raise NotImplementedError

    @staticmethod
    def group_categories(group: str) -> tuple[str, ...]:
        """The categories named by `--group`."""
        raise NotImplementedError

    @staticmethod
    def overall_report(run_dirs: Sequence[Path], official: bool) -> tuple[str, bool]:
        """`gecko score --overall`: the V4 leaderboard over the run directories' result files (`overall.py`), with
        the official leaderboard code's values beside ours when `official`. Returns the text and whether the
        official values agree (True without `official`).

        Raises:
            OverallError: The directories cannot be combined.
            RuntimeError, OSError: The official CLI failed.
        """
        if not official:
            return overall_report(run_dirs).format(), True
        with tempfile.TemporaryDirectory(prefix="bfcl-overall-score-") as scratch:
            report = overall_report(run_dirs, official_score_dir=Path(scratch))
        return report.format(), not report.disagreements

    def agents_for(self, settings: AgentSettings, llm: LLMClient | None) -> Callable[[Any], Any]:
        """The function that gives each task its agent(s) (`agents.agent_factory`, `multi_agents.multi_turn_agents`)."""
        raise NotImplementedError

    async def run_task(self, task: Any, agents: Any, client: GeckoClient, config: GatsConfig, *,
                       labels: dict[str, str], faults: TaskFaults) -> SingleTaskOutcome | MultiTaskOutcome:
        """One task through GATS (`single_turn.run_single_task`, `multi_turn.run_multi_task`), under `faults` in
        the fault arm."""
        raise NotImplementedError

    def score_task(self, task: Any, result: Any) -> EntryScore:
        """One result line scored with the official checker (`scoring.score_single_turn`, `score_multi_turn`)."""
        raise NotImplementedError

    def __init__(self, config: BfclRunConfig, options: RunOptions) -> None:
        self.settings = config
        self.options = options
        self._dataset_sizes: dict[str, int] = {}
        self._labels: dict[str, str] = {}
        self._client: GeckoClient | None = None
        """The run's Gecko client (set by `preflight`)."""
        self._agents: Callable[[Any], Any] | None = None
        self._budget: ContextBudget | None = None
        """The planner's context budget (its endpoint's window; found by the preflight probe)."""
        """The function that gives each task its agent(s) (set by `preflight`)."""

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """`--category`, the model, the selection, and the GATS and agent flags."""
        required = " (required)" if cls.category_default is None else ""
        parser.add_argument("--category", default=cls.category_default, help=cls.category_help + required)
        parser.add_argument("--group", choices=LEADERBOARD_GROUPS,
                            help="every category of one BFCL V4 leaderboard group (instead of --category)")
        add_model_argument(parser, help_text="scripted-oracle | scripted-noisy (offline, no model) | an LLM alias | "
                                             "openai-compatible:<model>@<base_url>")
        add_selection_arguments(parser, ids_help="task ids, comma or space separated (full, or short like 3 / 3-1-0 "
                                                 "for one category)")
        defaults = cls.config_type.model_fields
        bfcl = parser.add_argument_group("BFCL")
        bfcl.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES,
                          help="GATS retries after the first attempt; 0 = the baseline without GATS")
        bfcl.add_argument("--seed", type=int, default=0, help="seed of scripted-noisy's errors")
        bfcl.add_argument("--error-rate", type=float, default=DEFAULT_ERROR_RATE,
                          help="probability that scripted-noisy corrupts a call")
        steps = defaults["max_steps"].default
        bfcl.add_argument("--max-steps", type=int, default=steps, help=f"planner steps per run (default {steps})")
        bfcl.add_argument("--temperature", type=float, default=0.0, help="planner temperature")
        add_agent_backend_argument(bfcl)
        add_fault_arguments(parser)
        cap = defaults["max_tokens"].default
        bfcl.add_argument("--max-tokens", type=int, default=cap,
                          help=f"output cap of each planner completion (default {cap})")
        checklist = defaults["generate_checklist"].default
        bfcl.add_argument("--checklist", action=argparse.BooleanOptionalAction, default=checklist,
                          help=f"a checklist per task (per turn in multi-turn) from Gecko's judge model "
                               f"(default {'on' if checklist else 'off'})")

    @classmethod
    def from_args(cls, args: argparse.Namespace, options: RunOptions) -> _Bfcl:
        """The run for parsed flags.

        Raises:
            ValueError: A missing flag, an unknown scripted agent or category, or a value out of range.
        """
        group = getattr(args, "group", None)
        if group is not None and args.category not in (None, cls.category_default):
            raise ValueError("give --category or --group, not both")
        require(args, **({} if group else {"category": "--category"}), model="--model")
        if args.model.startswith("scripted-") and not is_scripted(args.model):
            raise ValueError(f"unknown scripted agent {args.model!r}; choose one of {', '.join(SCRIPTED_MODELS)}")
        categories = cls.group_categories(group) if group else cls.categories_of(args.category)
        return cls.build(cls.config_type(
            categories=categories, model=args.model, ids=selected_ids(args),
            num_tasks=args.num_tasks, max_retries=args.max_retries, seed=args.seed, error_rate=args.error_rate,
            max_steps=args.max_steps, temperature=args.temperature, max_tokens=args.max_tokens,
            generate_checklist=args.checklist, agent_backend=args.agent_backend, faults=policy_from_args(args)),
            options, args)

    @classmethod
    def build(cls, config: BfclRunConfig, options: RunOptions, args: argparse.Namespace | None = None) -> _Bfcl:
        """The run of `config` (`args`: the parsed flags, None when rescoring a run directory)."""
        return cls(config, options)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], options: RunOptions) -> _Bfcl:
        """The run recorded in a run directory's `config.json`."""
        return cls.build(cls.config_type.model_validate(dict(config)), options)

    def config(self) -> dict[str, Any]:
        """The run's settings as JSON."""
        return self.settings.model_dump(mode="json")

    def result_settings(self) -> dict[str, Any]:
        """Settings a resume must match."""
        return self.settings.result_settings()

    def run_label(self) -> str:
        """`bfcl_<model>` / `bfcl-multi_<model>` (plus `_<backend>` for a non-default agent backend)."""
        backend = self.settings.agent_backend
        return f"{self.name}_{model_dir_name(self.settings.model)}" + (f"_{backend}" if backend != "planner" else "")

    def models(self) -> dict[str, str]:
        """The planner's model, unless scripted."""
        return {} if is_scripted(self.settings.model) else {"planner": self.settings.model}

    def gats_config(self) -> GatsConfig:
        """GATS settings of every task; the retry feedback fits the planner's context window when its endpoint said
        how large it is (preflight)."""
        config = self.settings.gats()
        return config if self._budget is None else replace(config, feedback_chars=self._budget.feedback_chars)

    def select(self) -> list[WorkItem]:
        """The selected tasks of every category, category by category (ids of other categories are ignored
        when several categories run)."""
        items: list[WorkItem] = []
        config = self.settings
        for category in config.categories:
            ids = list(config.ids) if config.ids is not None else None
            if ids is not None and len(config.categories) > 1:
                ids = [i for i in ids if category_of_id(i) == category]
                if not ids:
                    continue
            items += [WorkItem(task.id, category, task)
                      for task in load_tasks(category, ids=ids, num_tasks=config.num_tasks)]
        if not items:
            raise ValueError("the selection holds no task")
        return with_fault_arm(items, config.faults)

    def local_gecko(self) -> LocalGecko | None:
        """Gecko on the benchmark's toolkits (`--gecko-url auto`)."""
        raise NotImplementedError

    def _dataset_size(self, category: str) -> int:
        if category not in self._dataset_sizes:
            self._dataset_sizes[category] = len(load_category(category))
        return self._dataset_sizes[category]

    def finish(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        """Result files of every category from the checkpoint; scored with the official checkers when complete; a
        sweep (several categories) adds the leaderboard table."""
        evaluation = self.score_files(entries, run_dir, complete)
        return with_leaderboard(evaluation, entries, run_dir) if len(self.settings.categories) > 1 else evaluation

    def score_files(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        """Result files of every category from the checkpoint; scored with the official checkers when complete."""
        results, scores = run_dir / RESULT_DIR, run_dir / SCORE_DIR
        by_category: dict[str, list[ResultRecord]] = {}
        for entry in entries:
            if entry.status == "done" and entry.record is not None and not is_fault_arm(entry.key):
                by_category.setdefault(entry.group, []).append(ResultRecord.model_validate(entry.record))
        files = []
        for category, records in by_category.items():
            path = result_path(results, self.settings.model, category)
            write_results(path, dedupe_records(records))
            files.append((ResultFile(model_dir_name(self.settings.model), category, path), len(records)))
        partial = any(count < self._dataset_size(item.category) for item, count in files)
        lines: tuple[str, ...] = (f"results: {results}",
                 f"score:   python -m benchmarks.bfcl.evaluate --result-dir {results} --test-category all"
                 + (" --partial-eval" if partial else ""),
                 f"official: gecko score --official {run_dir}  (the bfcl CLI itself on these files)")
        if not complete or not files:
            return Evaluation({"result_dir": str(results)}, lines)
        summary = evaluate_files([item for item, _ in files], scores, partial=partial)[0]
        paths = {item.category: str(item.path) for item, _ in files}
        metrics = {name: {"accuracy": score.accuracy, "correct": score.correct, "scored": score.total,
                          "dataset_size": score.dataset_size, "result_file": paths[name]}
                   for name, score in summary.categories.items()}
        groups = {name: group.accuracy for name, group in summary.groups.items()}
        return Evaluation({"result_dir": str(results), "score_dir": str(scores), "categories": metrics,
                           "groups": groups, "overall": summary.overall}, lines)

    def official_check(self, entries: Sequence[LedgerEntry], run_dir: Path) -> OfficialCheck:
        """`bfcl evaluate` itself on the run's result files (`official.py`): correct and scored counts per category,
        beside ours. The fault arm of a `--faults` run has no official files (it is not a BFCL run), so it is left
        out."""
        done: dict[str, list[float]] = {}
        for entry in entries:
            if entry.status == "done" and entry.score is not None and not is_fault_arm(entry.key):
                done.setdefault(entry.group, []).append(entry.score)
        notes = ((f"scored under {OFFICIAL_HANDLER}: a registered prompt-mode handler, whose decoder reads the text "
                  "our result files hold"),)
        return check_against_official(done, self._dataset_size, run_dir / RESULT_DIR, self.settings.model,
                                      run_dir / OFFICIAL_SCORE_DIR, notes)

    def _gecko_checks(self, items: Sequence[WorkItem]) -> tuple[list[str], Callable[[HealthInfo], None], str]:
        """The toolkits the selected tasks need, the check of Gecko's health report, and the command that starts
        a suitable Gecko."""
        raise NotImplementedError

    def _info(self, outcome: SingleTaskOutcome | MultiTaskOutcome, valid: bool) -> dict[str, Any]:
        assert outcome.record is not None
        return {"gats": (outcome.record.model_extra or {}).get("gats")}

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> dict[str, Any]:
        """Gecko's roles and the tasks' toolkits (preflight.py); the agents for `--model`. Returns Gecko's
        version and roles, the models per role, the GATS and agent settings (recorded in `config.json`)."""
        toolkits, check, start = self._gecko_checks(items)
        self._client = context.gecko()
        health = await check_gecko(self._client, toolkits, start, check)
        llm = None if is_scripted(self.settings.model) else context.llm()
        self._agents = self.agents_for(self.settings.agents(), llm)
        self._budget = None if llm is None else context_budget(llm, self.settings.model, self.settings.max_tokens)
        self._labels = {"run": context.run_name}
        roles = {role: info.model_dump() for role, info in health.roles.items()}
        return {"gecko": {"version": health.version, "roles": roles, "store": health.store,
                          "toolkits": health.toolkits, "state_model_enabled": health.state_model_enabled},
                "models": {"planner": self.settings.model, **{role: info["model"] for role, info in roles.items()}},
                "gats": asdict(self.gats_config()), "agent": asdict(self.settings.agents())}

    async def run(self, item: WorkItem) -> TaskOutcome:
        """One task (through GATS on Gecko), scored with the official checker of its category."""
        assert self._client is not None and self._agents is not None, "preflight() runs first"
        if isinstance(item.task, WebSearchTask) and (missing := missing_backend()) is not None:
            return TaskOutcome("untested", reason=missing, trace={"id": item.key, "status": "untested",
                                                                  "error": missing}, outage=False)
        faults = TaskFaults.of(self.settings.faults, item.key)
        outcome = await self.run_task(item.task, self._agents(item.task), self._client, self.gats_config(),
                                      labels=self._labels, faults=faults)
        trace = dict(outcome.trace)
        if outcome.record is None:
            trace["valid"] = None
            return TaskOutcome("untested", reason=str(trace.get("error") or "no attempt finished"), trace=trace,
                               usage=outcome.usage)
        score = self.score_task(item.task, outcome.record.result)
        trace["score"] = {"valid": score.valid, "error_type": score.error_type}
        trace["valid"] = score.valid
        info = {**self._info(outcome, score.valid), "robustness": outcome.robustness, **faults.row()}
        return TaskOutcome("done", score=float(score.valid), record=outcome.record.model_dump(mode="json"),
                           info=info, trace=trace, usage=outcome.usage,
                           note="correct" if score.valid else f"wrong ({score.error_type})")


class BfclSingleTurn(_Bfcl):
    """A BFCL single-turn run: each task through GATS on Gecko, its best attempt exported."""

    name, config_type, category_default = "bfcl", BfclRunConfig, None
    categories_of = staticmethod(single_turn_categories)
    group_categories = staticmethod(single_turn_group)
    category_help = f"one of {', '.join(SINGLE_TURN_CATEGORIES)}, or 'all' (one result file per category)"

    def agents_for(self, settings: AgentSettings, llm: LLMClient | None) -> AgentFactory:
        return agent_factory(settings, llm)

    async def run_task(self, task: SingleTurnTask, agents: Agent, client: GeckoClient, config: GatsConfig, *,
                       labels: dict[str, str], faults: TaskFaults) -> SingleTaskOutcome:
        return await run_single_task(task, agents, client, config, labels=labels, faults=faults)

    def score_task(self, task: SingleTurnTask, result: Any) -> EntryScore:
        return score_single_turn(task, result)

    def local_gecko(self) -> LocalGecko:
        """Gecko on every single-turn toolkit, state model off (start-up takes a while: 3,235 toolkits)."""
        return LocalGecko((OPENAPI_DIR / "single_turn",), ("--state-model", "none"), workers=2)

    def _gecko_checks(self, items: Sequence[WorkItem]) -> tuple[list[str], Callable[[HealthInfo], None], str]:
        return ([items[0].key], lambda health: check_single_turn_health(health, self.settings.model),
                SINGLE_TURN_GECKO.format(validation="rules"))

    def _info(self, outcome: SingleTaskOutcome | MultiTaskOutcome, valid: bool) -> dict[str, Any]:
        """GATS figures, and whether GATS recovered the task (a retry succeeded and the answer is correct)."""
        best = outcome.trace.get("best")
        return {**super()._info(outcome, valid), "recovered": valid and outcome.status == "success" and bool(best)}


class BfclMultiTurn(_Bfcl):
    """A BFCL multi-turn run: per turn, GATS in simulation, then real execution and sync."""

    name, config_type, category_default = "bfcl-multi", MultiTurnRunConfig, "multi_turn_base"
    categories_of = staticmethod(multi_turn_categories)
    group_categories = staticmethod(multi_turn_group)
    category_help = (f"one of {', '.join(MULTI_TURN_CATEGORIES)} (or without the multi_turn_ prefix), "
                     f"{', '.join(AGENTIC_CATEGORIES)}, or 'all' (the multi-turn ones; default multi_turn_base)")

    def agents_for(self, settings: AgentSettings, llm: LLMClient | None) -> TurnAgentsFactory:
        return with_web_search(multi_turn_agents(settings, llm), settings.model, seed=settings.seed,
                               error_rate=settings.error_rate)

    async def run_task(self, task: MultiTurnTask, agents: TurnAgents, client: GeckoClient, config: GatsConfig, *,
                       labels: dict[str, str], faults: TaskFaults) -> MultiTaskOutcome:
        return await run_multi_task(task, agents, client, config, labels=labels, faults=faults)

    def score_task(self, task: MultiTurnTask, result: Any) -> EntryScore:
        return score_entry(task, result)

    def local_gecko(self) -> LocalGecko:
        """Gecko on the eight class toolkits with the rules state model."""
        return LocalGecko((OPENAPI_DIR / "multi_turn",), ("--state-model", "rules"), workers=2)

    def _gecko_checks(self, items: Sequence[WorkItem]) -> tuple[list[str], Callable[[HealthInfo], None], str]:
        classes = sorted({name for item in items for name in item.task.involved_classes})
        return classes, check_multi_turn_health, MULTI_TURN_GECKO
