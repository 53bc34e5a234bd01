"""tau2-bench on the shared runner: `Tau2Benchmark` (`gecko tau2`, `run_taubench.py`).

```
select    the split's tasks (task ids, first N) × trials   → WorkItem("<task id>#<trial>", domain, (task, trial))
preflight the mock toolkit of the domain is served by Gecko (hybrid mode); the LLM judge
run       fresh environment ─► agent (+ GATS hybrid) and user ─► run_simulation ─► grade
finish    <run dir>/results.json (the official tau2 shape) from the checkpoint; avg reward and pass^k
```

With `--faults` every job also runs in the fault arm (`<task id>#<trial>~faults`, group `<domain>+faults`): the
conversation's tool calls meet the real side's policy (`tool_responder.py`), the GATS rehearsals the simulated
side's (the Gecko session's policy); its conversations go to `results_faults.json`, and the summary's robustness
block compares the arms.

A conversation that ended by an infrastructure error (LLM or Gecko down) is `untested`: out of the metrics and
out of `results.json` (the official tools would score it as a failure), kept in `tasks.jsonl` with
`infrastructure_error` as its termination, listed in `summary.json`, and rerun by `--resume`.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.runner import (
    AUTO_GECKO,
    Evaluation,
    LedgerEntry,
    LocalGecko,
    OfficialCheck,
    RunContext,
    RunOptions,
    TaskOutcome,
    WorkItem,
)
from benchmarks.runner.command import (
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
from benchmarks.runner.files import write_atomic
from benchmarks.runner.gecko_check import check_gecko
from benchmarks.runner.official_venv import VenvError
from benchmarks.runner.rundir import git_commit
from benchmarks.taubench.agent_tools import load_catalog
from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.evaluate import Evaluator
from benchmarks.taubench.gats_hybrid import GatsAgent, GatsUnavailableError, HybridGats, rehearsal_trace
from benchmarks.taubench.llm_judge import LLMNLJudge
from benchmarks.taubench.loader import DataStore
from benchmarks.taubench.metrics import compute_metrics
from benchmarks.taubench.mock_toolkits import MOCK_DIR
from benchmarks.taubench.official import run_official_tools
from benchmarks.taubench.orchestrator import run_simulation
from benchmarks.taubench.participants import TimedAgent, build_participants, rollout_factory
from benchmarks.taubench.results import (
    AgentInfo,
    EnvironmentInfo,
    Info,
    Results,
    SimulationRun,
    TerminationReason,
    UserInfo,
    official_simulation,
)
from benchmarks.taubench.run_config import SCRIPTED_AGENTS, SCRIPTED_ORACLE, SCRIPTED_USER, Tau2RunConfig
from benchmarks.taubench.tasks import Task
from benchmarks.taubench.tool_responder import ToolResponder
from gats import GatsConfig
from inference.gecko import GeckoClient, GeckoError
from inference.tools import ToolCatalog
from inference.tools.robustness import robustness_of
from utils.llm import LLMClient, LLMInfrastructureError

INFRASTRUCTURE_ERRORS: tuple[type[BaseException], ...] = (LLMInfrastructureError, GeckoError, GatsUnavailableError)
RESULTS_FILE = "results.json"
FAULT_RESULTS_FILE = "results_faults.json"
"""The fault arm's conversations (`--faults`), in the same shape."""


class Tau2Benchmark:
    """A tau2 run: jobs (task × trial) of one domain, graded with the official reward."""

    name: ClassVar[str] = "tau2"
    default_gecko_url: ClassVar[str | None] = AUTO_GECKO
    default_workers: ClassVar[int] = 1
    offline_models: ClassVar[tuple[str, ...]] = SCRIPTED_AGENTS

    def __init__(self, config: Tau2RunConfig, options: RunOptions, store: DataStore | None = None) -> None:
        self.settings = config
        self.options = options
        self.store = store or DataStore()
        self.runtime = DomainRuntime(config.domain, self.store, config.task_set)
        self.catalog: ToolCatalog = load_catalog(self.runtime)
        self.user_catalog: ToolCatalog | None = load_catalog(self.runtime, side="user") if self.runtime.dual_control else None
        self.client: LLMClient | None = None
        self.gecko: GeckoClient | None = None
        self.gats_config = GatsConfig(max_retries=config.gats_retries, judge=True, generate_checklist=True)
        self.evaluator = Evaluator(self.runtime, None)
        self.labels: dict[str, str] = {}
        """Labels of the run's Gecko sessions (set by `preflight`)."""

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The domain, the agent/user/judge models, the selection, trials and GATS flags."""
        parser.add_argument("--domain", choices=["airline", "retail", "telecom"],
                            help="airline, retail or telecom (dual control: the user has tools too) (required)")
        add_model_argument(parser, "--agent-llm", default=SCRIPTED_ORACLE,
                           help_text=f"the agent: a model alias, or {' / '.join(SCRIPTED_AGENTS)} (offline)")
        parser.add_argument("--user-llm", default=SCRIPTED_USER, help="the user simulator: a model alias, or scripted")
        parser.add_argument("--judge-llm", default=None, help="NL-assertion judge (default: the agent's model)")
        add_selection_arguments(parser, ids_help="task ids, comma or space separated")
        tau2 = parser.add_argument_group("tau2")
        tau2.add_argument("--task-set", choices=["v1", "v0"], default="v1")
        tau2.add_argument("--split", choices=["base", "train", "test"], default="base")
        tau2.add_argument("--num-trials", type=int, default=1)
        tau2.add_argument("--seed", type=int, default=300, help="trial k uses seed+k")
        tau2.add_argument("--max-retries", "--gats-retries", dest="gats_retries", type=int, default=2,
                          help="GATS rehearsals per reply after the first (hybrid mode)")
        tau2.add_argument("--gats-mode", choices=["none", "hybrid"], default="hybrid")
        tau2.add_argument("--agent-timeout", type=float, default=360.0, help="seconds per agent reply")
        tau2.add_argument("--max-steps", type=int, default=200)
        add_agent_backend_argument(tau2)
        add_fault_arguments(parser)

    @classmethod
    def from_args(cls, args: argparse.Namespace, options: RunOptions) -> Tau2Benchmark:
        """The run for parsed flags.

        Raises:
            ValueError: A missing flag or a value out of range.
        """
        require(args, domain="--domain")
        return cls(Tau2RunConfig(
            domain=args.domain, agent_llm=args.model, user_llm=args.user_llm, judge_llm=args.judge_llm,
            task_set=args.task_set, split=args.split, task_ids=selected_ids(args), num_tasks=args.num_tasks,
            num_trials=args.num_trials, seed=args.seed, gats_mode=args.gats_mode, gats_retries=args.gats_retries,
            agent_timeout=args.agent_timeout, max_steps=args.max_steps, agent_backend=args.agent_backend,
            faults=policy_from_args(args)), options)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], options: RunOptions) -> Tau2Benchmark:
        """The run recorded in a run directory's `config.json`."""
        return cls(Tau2RunConfig.model_validate(dict(config)), options)

    def config(self) -> dict[str, Any]:
        """The run's settings as JSON."""
        return self.settings.public()

    def result_settings(self) -> dict[str, Any]:
        """Settings a resume must match."""
        return self.settings.result_settings()

    def run_label(self) -> str:
        """`<domain>_<agent>_user-<user>_<mode>`."""
        return self.settings.run_label()

    def models(self) -> dict[str, str]:
        """The LLMs of the agent, the user simulator and the judge (scripted ones excluded)."""
        config = self.settings
        models = {"agent": config.agent_llm} if not config.agent_is_scripted else {}
        if config.user_llm != SCRIPTED_USER:
            models["user"] = config.user_llm
        if config.effective_judge:
            models["nl_judge"] = config.effective_judge
        return models

    @property
    def needs_gecko(self) -> bool:
        """Only hybrid mode rehearses on Gecko."""
        return self.settings.gats_mode == "hybrid"

    def local_gecko(self) -> LocalGecko:
        """Gecko on the mock toolkits with the offline rules engines (fine for scripted runs; LLM runs should
        point `--gecko-url` at a Gecko configured with LLM models)."""
        return LocalGecko((MOCK_DIR,), ("--state-model", "none"), workers=1)

    def select(self) -> list[WorkItem]:
        """The split's tasks, then `task_ids` (in the given order), then the first `num_tasks`; × trials.

        Raises:
            ValueError: A requested id is not in the split.
        """
        config = self.settings
        tasks = self.store.tasks(config.domain, config.task_set, config.split)
        if config.task_ids:
            by_id = {t.id: t for t in tasks}
            missing = [i for i in config.task_ids if i not in by_id]
            if missing:
                raise ValueError(f"tasks not in {config.domain} {config.task_set} {config.split}: "
                                 f"{', '.join(missing)}")
            tasks = [by_id[i] for i in config.task_ids]
        tasks = tasks[: config.num_tasks] if config.num_tasks else tasks
        return with_fault_arm([WorkItem(f"{task.id}#{trial}", config.domain, (task, trial))
                               for trial in range(config.num_trials) for task in tasks], config.faults)

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> dict[str, Any]:
        """Hybrid mode: Gecko answers and serves the domain's mock toolkit. Builds the LLM client and judge."""
        config = self.settings
        if self.models():
            self.client = context.llm()
        judge = config.effective_judge
        self.evaluator = Evaluator(self.runtime, LLMNLJudge(self.client, judge) if self.client and judge else None)
        if not self.needs_gecko:
            return {}
        self.labels = {"run": context.run_name}
        self.gecko = context.gecko(timeout_s=max(config.agent_timeout, 30.0))
        start = (f"python run_gecko_server.py --schemas-dir {MOCK_DIR}; or pass --gecko-url auto, or --gats-mode none "
                 "to run without GATS")
        health = await check_gecko(self.gecko, [config.domain], start)
        # with LLM engines, read each rehearsal's server-side usage (responder, state, validator) for the costs
        self.gats_config = dataclasses.replace(self.gats_config, collect_server_usage=not health.offline)
        roles = {role: info.model_dump() for role, info in health.roles.items()}
        return {"gecko": {"version": health.version, "roles": roles, "store": health.store, "offline": health.offline}}

    async def run(self, item: WorkItem) -> TaskOutcome:
        """One conversation, graded; `untested` when it ended by an infrastructure error."""
        task, trial = item.task
        faults = TaskFaults.of(self.settings.faults, item.key)
        simulation, usage, robustness = await self._simulate(task, trial, faults)
        info = simulation.reward_info
        graded = info is not None and info.graded
        untested = simulation.termination_reason == TerminationReason.INFRASTRUCTURE_ERROR
        gats = (simulation.info or {}).get("gats") or {}
        row = {"trial": trial, "seed": simulation.seed, "duration_s": round(simulation.duration, 3),
               "termination_reason": simulation.termination_reason.value,
               "graded": graded and not untested, "reward": info.reward if graded and not untested and info else None,
               "gats": {k: v for k, v in gats.items() if k != "rehearsals"} or None,
               "llm_calls": (simulation.info or {}).get("llm_calls"), "robustness": robustness, **faults.row()}
        record = simulation.model_dump(mode="json")
        trace = rehearsal_trace(item.key, gats)
        if untested:
            return TaskOutcome("untested", reason=str((simulation.info or {}).get("error") or "infrastructure error"),
                               record=record, info=row, usage=usage, trace=trace)
        return TaskOutcome("done", score=row["reward"], record=record, info=row, usage=usage, trace=trace,
                           note=f"{simulation.termination_reason.value}, reward {row['reward']}")

    async def _simulate(self, task: Task, trial: int, faults: TaskFaults
                        ) -> tuple[SimulationRun, list[dict[str, Any]], dict[str, Any]]:
        config, runtime = self.settings, self.runtime
        seed = config.seed + trial
        environment = runtime.environment(task.initial_state)
        responder = ToolResponder(environment, self.catalog, faults.real)
        agent, user = build_participants(config, task, runtime, self.catalog, self.user_catalog, self.client, seed)
        gats: HybridGats | None = None
        wrapped: Any = agent
        if self.needs_gecko:
            assert self.gecko is not None, "preflight() runs first"
            gats = HybridGats(self.gecko, runtime, self.catalog, environment,
                              rollout_factory(config, task, runtime, self.client), self.gats_config,
                              labels={**self.labels, "task": task.id, "trial": str(trial)}, faults=faults.simulated)
            wrapped = GatsAgent(agent, gats)
        wrapped = TimedAgent(wrapped, config.agent_timeout)  # bounds rehearsals + reply together
        try:
            simulation = await run_simulation(task, wrapped, user, environment, max_steps=config.max_steps,
                                              max_errors=config.max_errors, trial=trial, seed=seed,
                                              infrastructure_errors=INFRASTRUCTURE_ERRORS, respond=responder.respond)
        finally:
            if gats is not None:
                await gats.close()
        usage = list(getattr(agent, "usage", [])) + list(getattr(user, "usage", []))
        extra: dict[str, Any] = {"llm_calls": {"agent": len(getattr(agent, "usage", [])),
                                               "user": len(getattr(user, "usage", []))}}
        if gats is not None:
            usage.extend(gats.stats.usage)
            extra["gats"] = gats.record()
            extra["llm_calls"]["gats"] = len(gats.stats.usage)
        if faults.active:
            extra["faults"] = responder.injections
        simulation.info = {**(simulation.info or {}), **extra}
        judge_usage = getattr(self.evaluator.judge, "usage", None)
        before = len(judge_usage) if judge_usage is not None else 0
        simulation.reward_info = await self.evaluator.grade(task, simulation)
        if judge_usage is not None:
            usage.extend(judge_usage[before:])
        robustness = robustness_of({"real": [responder.records], "simulated": gats.episodes if gats else []})
        return simulation, [dict(u) for u in usage], robustness

    def info(self) -> Info:
        """The run's `Info` block of `results.json`."""
        config = self.settings
        agent_impl = config.agent_llm if config.agent_is_scripted else "llm_agent"
        if config.gats_mode == "hybrid":
            agent_impl = f"gats_hybrid_{agent_impl}"
        scripted_user = config.user_llm == SCRIPTED_USER
        return Info(
            git_commit=git_commit()["commit"] or "unknown", num_trials=config.num_trials, max_steps=config.max_steps,
            max_errors=config.max_errors, seed=config.seed,
            user_info=UserInfo(implementation="scripted_user" if scripted_user else "user_simulator",
                               llm=None if scripted_user else config.user_llm,
                               global_simulation_guidelines=self.store.user_guidelines_tools()
                               if self.runtime.dual_control else self.store.user_guidelines()),
            agent_info=AgentInfo(implementation=agent_impl, llm=None if config.agent_is_scripted else config.agent_llm),
            environment_info=EnvironmentInfo(domain_name=self.runtime.name, policy=self.runtime.policy),
            data_version=self.store.data_version(config.domain, config.task_set),
        )

    def finish(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        """`results.json` from the checkpoint (every finished conversation: untested ones are left out, since the
        official tools would count them as failures; they are in `summary.json` and rerun by `--resume`); metrics
        over the graded ones. A `--faults` run writes its fault arm to `results_faults.json` the same way."""
        metrics, lines = self._write_results([e for e in entries if not is_fault_arm(e.key)], run_dir / RESULTS_FILE)
        faulted = [e for e in entries if is_fault_arm(e.key)]
        if faulted:
            fault_metrics, fault_lines = self._write_results(faulted, run_dir / FAULT_RESULTS_FILE)
            metrics["faults"] = fault_metrics
            lines += tuple(f"under faults: {line}" for line in fault_lines)
        return Evaluation(metrics, lines)

    def _write_results(self, entries: Sequence[LedgerEntry], path: Path) -> tuple[dict[str, Any], tuple[str, ...]]:
        ran = sorted((SimulationRun.model_validate(e.record) for e in entries if e.record is not None),
                     key=lambda s: (s.task_id, s.trial or 0))
        simulations = [official_simulation(s) for s in ran
                       if s.termination_reason != TerminationReason.INFRASTRUCTURE_ERROR]
        used = {s.task_id for s in simulations}
        tasks = [t for t in self.store.tasks(self.settings.domain, self.settings.task_set, None) if t.id in used]
        results = Results(info=self.info(), tasks=tasks, simulations=simulations)
        write_atomic(path, results.model_dump_json(indent=2))
        metrics = compute_metrics(ran)  # untested conversations are counted as such, out of the figures
        pass_k = ", ".join(f"pass^{k} {v:.3f}" for k, v in metrics.pass_hat_ks.items())
        average = "-" if metrics.avg_reward is None else f"{metrics.avg_reward:.3f}"
        lines = (f"results: {path}", f"avg reward {average} over {metrics.num_graded} graded runs; {pass_k}")
        return {"results_file": str(path), **metrics.model_dump(mode="json")}, lines

    def official_check(self, entries: Sequence[LedgerEntry], run_dir: Path) -> OfficialCheck:
        """The official tau2 tools on `results.json` (`official.py`): every simulation graded again by
        `tau2 evaluate-trajs` (reward by reward, and the average), and the file verified (`verify-trajs`)."""
        path = run_dir / RESULTS_FILE
        ours = {s.id: s for s in Results.model_validate_json(path.read_text(encoding="utf-8")).simulations}
        if not ours:
            return OfficialCheck(problems=(f"{path} holds no simulation: nothing to check",))
        config = self.settings
        try:
            official = run_official_tools(path, self.store, config.domain, config.task_set)
        except (VenvError, OSError, subprocess.SubprocessError) as exc:
            return OfficialCheck(problems=(str(exc),))
        problems = [official.error] if official.error else []
        rewards = {sid: (s.reward_info.reward if s.reward_info else 0.0) for sid, s in ours.items()}
        ungraded = sorted(s.task_id for s in ours.values() if s.reward_info is not None and not s.reward_info.graded)
        rows: list[tuple[str, Any, Any]] = []
        if official.rewards:
            rows.append(("simulations", len(rewards), len(official.rewards)))
            rows.append(("rewards equal, simulation by simulation", len(rewards),
                         sum(official.rewards.get(sid) == reward for sid, reward in rewards.items())))
            rows.append(("avg reward", round(sum(rewards.values()) / len(rewards), 6),
                         round(official.avg_reward or 0.0, 6)))
        notes: list[str] = []
        if ungraded:
            notes.append(f"tasks {', '.join(ungraded)} need an NL judge: ours left them ungraded (no judge model)")
        selected = len(self.store.tasks(config.domain, config.task_set, "base"))
        covered = len({s.task_id for s in ours.values()})
        for check, message in official.verify.items():
            if message is None:
                continue
            if covered < selected and check in ("tasks", "verify-trajs"):
                notes.append(f"verify ({check}): {message} — expected: the run covers {covered} of {selected} tasks")
            else:
                problems.append(f"verify ({check}): {message}")
        return OfficialCheck(tuple(rows), tuple(official.commands), tuple(problems), tuple(notes))
