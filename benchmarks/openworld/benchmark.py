"""`gecko openworld`: open-world agents on a task set, with the tool pool served by Gecko (see README.md).

```
select    the tasks of --tasks (OpenWorldTask lines)            → one item per task (key: task id, group: the agent)
          (+ each task's fault-arm twin with --faults)
preflight Gecko's /health, every served toolkit (the executor's catalog: the whole pool), /tools/search answers,
          every task's toolkits are served
run       POST /sessions {faults?} + /init-session-state (the task's state over its toolkits' defaults)
          → gats.run_turn: attempts on forks, each judged on the task's checklist; the agent is not handed tools,
            it finds them with GET /tools/search
          → the best attempt: judge score, each constraint's check on its calls, the reference toolkits found
finish    openworld.json: per agent group and overall (success, judge score, constraints passed, toolkits found)
```

There are no real tools in the open world: the best simulated attempt is the result (GATS picks it by the judge).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from benchmarks.openworld.scoring import CallFact, constraint_results, summarize, toolkits_found
from benchmarks.openworld.tasks.model import OpenWorldTask, read_tasks
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
    add_model_argument,
    add_selection_arguments,
    selected_ids,
)
from benchmarks.runner.faults import (
    TaskFaults,
    add_fault_arguments,
    checked_policy,
    policy_from_args,
    with_fault_arm,
)
from gats import GatsConfig, TurnInput, TurnResult, run_turn
from inference.agents import (
    GeckoToolSearch,
    PlannerActorAgent,
    ScriptedPlannerActorAgent,
    ScriptedSelectExecuteAgent,
    ScriptStep,
    SelectExecuteAgent,
)
from inference.agents.llm import LLMPlannerModel
from inference.gecko import GeckoClient, GeckoError, GeckoSandbox, fetch_catalog
from inference.gecko.errors import GeckoUnavailableError
from inference.tools.catalog import ToolCatalog
from inference.tools.execution import CallRecord
from inference.tools.robustness import robustness_of
from utils.llm import LLMClient
from utils.paths import DATA_DIR

AgentKind = Literal["select-execute", "planner-actor"]
AGENT_KINDS: tuple[AgentKind, ...] = ("select-execute", "planner-actor")
SCRIPTED = "scripted"
DEFAULT_POOL = DATA_DIR / "pool"
REPORT_JSON = "openworld.json"
OpenWorldAgent = SelectExecuteAgent | ScriptedSelectExecuteAgent | PlannerActorAgent | ScriptedPlannerActorAgent


def build_agent(kind: AgentKind, task: OpenWorldTask, client: GeckoClient, model: str,
                llm: LLMClient | None) -> OpenWorldAgent:
    """The agent of `kind` for one task: scripted (following the task's reference with the tools it finds) when
    `model` is `scripted`, else on the LLM `model`."""
    search = GeckoToolSearch(client)
    if model == SCRIPTED:
        script = [ScriptStep(call.toolkit, call.tool, call.arguments) for call in task.reference]
        if kind == "select-execute":
            return ScriptedSelectExecuteAgent(script, search, max_calls=task.max_calls)
        return ScriptedPlannerActorAgent(script, search, max_calls=task.max_calls)
    if llm is None:
        raise ValueError(f"--agent-llm {model} needs an LLM client")
    chat = LLMPlannerModel(llm, model)
    if kind == "select-execute":
        return SelectExecuteAgent(chat, search, max_calls=task.max_calls)
    return PlannerActorAgent(chat, chat, search, max_calls=task.max_calls)


def _public(call: CallRecord) -> dict[str, Any]:
    return {**call.public(), "operation_id": call.tool.operation_id if call.tool else None}


def _calls(result: TurnResult) -> list[dict[str, Any]]:
    best = result.best
    return [] if best is None else [_public(call) for call in best.calls]


def _attempts(result: TurnResult) -> list[dict[str, Any]]:
    return [{"index": a.index, "status": a.status, "session": a.session_id, "error": a.error,
             "score": a.verdict.score if a.verdict else None,
             "verdict": [dict(item) for item in a.verdict.items] if a.verdict else None,
             "calls": [_public(c) for c in a.calls], "answer": a.final_text} for a in result.attempts]


SEARCH_INDEX_WAIT_SECONDS = 3600.0
"""How long the preflight waits for Gecko's dense search index (embedding a 10,000-tool pool the first time takes
minutes on two cores; later runs read the embedding cache)."""
SEARCH_READY_ANSWERS = 4
"""Searches in a row that must answer before the run starts (each worker builds its index on its first search)."""


async def _await_search(client: GeckoClient) -> None:
    """Search until it answers `SEARCH_READY_ANSWERS` times in a row; while Gecko builds its dense index (503), wait
    and say how far it is every 30 s, so that every task searches with the same ranking."""
    deadline = time.monotonic() + SEARCH_INDEX_WAIT_SECONDS
    answered, said = 0, 0.0
    while answered < SEARCH_READY_ANSWERS:
        try:
            await client.search_tools("search", 1)
            answered += 1
        except GeckoUnavailableError as exc:
            if exc.status != 503 or time.monotonic() > deadline:
                raise
            answered = 0
            if time.monotonic() - said >= 30:
                said = time.monotonic()
                print(f"preflight: waiting for Gecko's tool search: {exc}", file=sys.stderr, flush=True)
            await asyncio.sleep(5)


class OpenWorldBenchmark:
    """One run of open-world agents on a task set."""

    name: ClassVar[str] = "openworld"
    default_gecko_url: ClassVar[str | None] = None
    default_workers: ClassVar[int] = 4
    offline_models: ClassVar[tuple[str, ...]] = (SCRIPTED,)
    needs_gecko = True

    def __init__(self, *, tasks: Path, agent: AgentKind = "select-execute", agent_llm: str = SCRIPTED,
                 pool: Path = DEFAULT_POOL, max_retries: int = 2, faults: Mapping[str, Any] | None = None,
                 ids: Sequence[str] | None = None, num_tasks: int | None = None,
                 options: RunOptions | None = None) -> None:
        if agent not in AGENT_KINDS:
            raise ValueError(f"unknown --agent {agent!r}; choose one of {', '.join(AGENT_KINDS)}")
        if max_retries < 0:
            raise ValueError("--max-retries must be >= 0")
        if num_tasks is not None and num_tasks < 0:
            raise ValueError("--num-tasks must be >= 0")
        self.tasks_path, self.agent, self.agent_llm, self.pool = Path(tasks), agent, agent_llm, Path(pool)
        self.max_retries = max_retries
        self.faults = checked_policy(faults)
        self.ids = tuple(ids) if ids else None
        self.num_tasks = num_tasks
        self.options = options
        self._client: GeckoClient | None = None
        self._llm: LLMClient | None = None
        self._catalog: ToolCatalog | None = None
        self._labels: dict[str, str] = {}

    # --- command line ---------------------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The benchmark's own flags."""
        parser.add_argument("--tasks", type=Path, required=False,
                            help="a task set: a directory with tasks.jsonl (and taskset.json), or a JSONL file")
        parser.add_argument("--agent", choices=AGENT_KINDS, default="select-execute",
                            help="select-execute (search the pool, then call) or planner-actor (a sub-goal graph, "
                                 "one step at a time, re-planning on failures and new constraints)")
        add_model_argument(parser, "--agent-llm", default=SCRIPTED,
                           help_text="the agent's model (an alias or openai-compatible:<model>@<base_url>), or "
                                     "'scripted' (default): the offline agent that follows each task's reference "
                                     "with the tools its searches find")
        parser.add_argument("--pool", type=Path, default=DEFAULT_POOL,
                            help=f"the pool directory (its toolkits/ are served by --gecko-url auto; default {DEFAULT_POOL})")
        parser.add_argument("--max-retries", type=int, default=2,
                            help="GATS: simulated attempts after the first, each with the judge's feedback (default 2)")
        add_fault_arguments(parser)
        add_selection_arguments(parser, ids_help="task ids")

    @classmethod
    def from_args(cls, args: argparse.Namespace, options: RunOptions) -> OpenWorldBenchmark:
        """The run for parsed flags.

        Raises:
            ValueError: No --tasks, a bad agent, retries or fault policy.
        """
        if args.tasks is None:
            raise ValueError("--tasks DIR is required (a task set made by the task engine, or a tasks.jsonl)")
        return cls(tasks=args.tasks, agent=args.agent, agent_llm=args.model, pool=args.pool,
                   max_retries=args.max_retries, faults=policy_from_args(args), ids=selected_ids(args),
                   num_tasks=args.num_tasks, options=options)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], options: RunOptions) -> OpenWorldBenchmark:
        """The run recorded in a run directory.

        Raises:
            ValueError: The record is not an open-world run's.
        """
        try:
            return cls(tasks=Path(config["tasks"]), agent=config["agent"], agent_llm=config["agent_llm"],
                       pool=Path(config["pool"]), max_retries=int(config["max_retries"]), faults=config.get("faults"),
                       ids=config.get("ids"), num_tasks=config.get("num_tasks"), options=options)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not an openworld run's config: {exc}") from exc

    # --- the run ---------------------------------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """Everything that defines the run."""
        return {"tasks": str(self.tasks_path), "agent": self.agent, "agent_llm": self.agent_llm,
                "pool": str(self.pool), "max_retries": self.max_retries, "faults": self.faults,
                "ids": list(self.ids) if self.ids else None, "num_tasks": self.num_tasks}

    def result_settings(self) -> dict[str, Any]:
        """What changes results: the task set, the agent and its model, GATS retries, the fault policy."""
        config = self.config()
        return {k: config[k] for k in ("tasks", "agent", "agent_llm", "max_retries", "faults")}

    def run_label(self) -> str:
        """`openworld_<agent>_<model>`."""
        label = f"openworld_{self.agent}_{self.agent_llm}"
        return "".join(c if c.isalnum() or c in "-._" else "-" for c in label)[:80]

    def models(self) -> dict[str, str]:
        """The agent's model under the planner role (none when scripted)."""
        return {} if self.agent_llm == SCRIPTED else {"planner": self.agent_llm}

    def local_gecko(self) -> LocalGecko:
        """Gecko on the pool's toolkits, 2 workers."""
        return LocalGecko((self.pool / "toolkits",), workers=2)

    def select(self) -> list[WorkItem]:
        """One item per task (group: the agent), each followed by its fault-arm twin with --faults.

        Raises:
            ValueError: The task set cannot be read, or the selection is empty.
        """
        try:
            tasks = list(read_tasks(self.tasks_path))
        except OSError as exc:
            raise ValueError(f"cannot read the task set {self.tasks_path}: {exc.strerror or exc}") from None
        if self.ids is not None:
            unknown = sorted(set(self.ids) - {t.id for t in tasks})
            if unknown:
                raise ValueError(f"unknown task ids: {', '.join(unknown[:5])}")
            tasks = [t for t in tasks if t.id in set(self.ids)]
        tasks = tasks[: self.num_tasks]
        if not tasks:
            raise ValueError("the selection is empty")
        return with_fault_arm([WorkItem(task.id, self.agent, task) for task in tasks], self.faults)

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> dict[str, Any]:
        """Gecko answers, serves every task's toolkits and searches; the catalog of every served toolkit.

        Raises:
            PreflightError: Gecko is down, search is not installed, or a task's toolkit is not served.
        """
        self._client = client = context.gecko()
        self._labels = {"run": context.run_name}
        start = f"gecko serve --schemas-dir {self.pool / 'toolkits'} (or --gecko-url auto)"
        try:
            health = await client.health()
            listing = await client.toolkits(tools=False)
            names = [str(tk["name"]) for tk in listing.get("toolkits", [])]
            needed = sorted({tk for item in items for tk in item.task.toolkits})
            missing = [name for name in needed if name not in set(names)]
            if missing:
                raise PreflightError(f"Gecko at {client.base_url} does not serve the toolkits {', '.join(missing[:5])} "
                                     f"the tasks need; start it with: {start}")
            self._catalog = await fetch_catalog(client, names)
            await _await_search(client)
        except GeckoError as exc:
            raise PreflightError(f"Gecko at {client.base_url} is not usable for the open world: {exc}; start it with: "
                                 f"{start}") from exc
        if self.agent_llm != SCRIPTED:
            self._llm = context.llm()
        roles = {role: info.model_dump() for role, info in health.roles.items()}
        return {"gecko": {"version": health.version, "roles": roles, "toolkits": health.toolkits,
                          "tools": len(self._catalog)},
                "models": {"planner": self.agent_llm, **{role: info["model"] for role, info in roles.items()}}}

    def _gats(self, task: OpenWorldTask) -> GatsConfig:
        keep = bool(self.options and self.options.debug)
        return GatsConfig(max_retries=self.max_retries, judge=True, fixed_checklist=task.checklist,
                          keep_sessions=keep)

    async def run(self, item: WorkItem) -> TaskOutcome:
        """One task through GATS on Gecko, scored by the judge, the constraints' checks and the toolkits found."""
        assert self._client is not None and self._catalog is not None, "preflight() runs first"
        client, task = self._client, item.task
        assert isinstance(task, OpenWorldTask)
        faults = TaskFaults.of(self.faults, item.key)
        agent = build_agent(self.agent, task, client, self.agent_llm, self._llm)
        sandbox = GeckoSandbox(client)
        config = self._gats(task)
        try:
            base = await client.create_session({"labels": {**self._labels, "task": task.id},
                                                **faults.session_config()})
        except GeckoError as exc:
            return TaskOutcome("untested", reason=f"Gecko: session: {exc}")
        try:
            await client.init_session_state(base.session_id, task.initial_state or {},
                                            involved_classes=list(task.toolkits))
            turn = TurnInput(task=task.instruction, messages=({"role": "user", "content": task.instruction},),
                             base_session_id=base.session_id, expects_tool_call=True)
            result = await run_turn(turn, agent, sandbox, self._catalog, config)
        except GeckoError as exc:
            return TaskOutcome("untested", reason=f"Gecko: {exc}")
        finally:
            if not config.keep_sessions:
                await sandbox.delete(base.session_id)
        robustness = robustness_of({"simulated": [attempt.calls for attempt in result.attempts]})
        trace: dict[str, Any] = {"id": task.id, "agent": agent.name, "status": result.status, "best": result.best_index,
                                 "attempts": _attempts(result), "agent_info": agent.describe()}
        best = result.best
        if best is None:
            return TaskOutcome("untested", reason=result.failure or "no attempt finished", trace=trace,
                               usage=result.usage)
        record = self._record(item, task, result, agent)
        trace["score"] = {k: record[k] for k in ("success", "judge_score", "constraints", "toolkits_found")}
        info = {"gats": {"status": result.status, "attempts": len(result.attempts), "best": best.index},
                "judge_score": record["judge_score"], "toolkits_found": record["toolkits_found"],
                "replans": record["replans"], "robustness": robustness, **faults.row()}
        return TaskOutcome("done", score=float(record["success"]), record=record, info=info, trace=trace,
                           usage=result.usage, note="success" if record["success"] else "failed")

    def _record(self, item: WorkItem, task: OpenWorldTask, result: TurnResult, agent: OpenWorldAgent) -> dict[str, Any]:
        best = result.best
        assert best is not None
        calls = _calls(result)
        constraints = constraint_results(task, [CallFact.from_public(c) for c in calls])
        judged = best.status == "success"
        found = agent.discovery.toolkits
        plan = agent.describe().get("plan") or {}
        return {"id": task.id, "key": item.key, "group": item.group,
                "success": judged and all(c["passed"] is not False for c in constraints),
                "judge_success": judged, "judge_score": best.score, "constraints": constraints,
                "toolkits": list(task.toolkits), "found_toolkits": found,
                "toolkits_found": toolkits_found(task, found), "calls": len(calls),
                "replans": len(plan.get("replans") or ()), "answer": best.final_text, "best_calls": calls,
                "attempts": len(result.attempts)}

    def finish(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        """`openworld.json`: the roll-up of every done task, per group and overall."""
        records = [e.record for e in entries if e.status == "done" and isinstance(e.record, dict)]
        report = {"config": self.config(), **summarize(records)}
        (run_dir / REPORT_JSON).write_text(json.dumps(report, indent=1), encoding="utf-8")
        return Evaluation(report["overall"], (f"openworld: {json.dumps(report['overall'])}",
                                              f"report: {run_dir / REPORT_JSON}"))

    def official_check(self, entries: Sequence[LedgerEntry], run_dir: Path) -> OfficialCheck:
        """Open-world task sets have no official scorer."""
        return OfficialCheck(notes=("open-world task sets have no official scorer: the judge and the constraint "
                                    "checks are the score",))
