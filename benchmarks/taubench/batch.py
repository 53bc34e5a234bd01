"""A tau2 run: jobs (task × trial) over a worker pool, grading, incremental atomic output, resume.

```
run_batch(config) ─► select tasks ─► [resume: keep earlier graded runs] ─► jobs on `workers` workers
   job: fresh environment ─► agent (+ GATS hybrid) and user ─► run_simulation ─► grade ─► write both files
```

A run that ended by an infrastructure error (LLM or Gecko down) is `untested`: not graded, out of the
metrics, and rerun by `--resume`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.evaluate import Evaluator
from benchmarks.taubench.gats_hybrid import GatsAgent, GatsUnavailableError, HybridGats
from benchmarks.taubench.llm_judge import LLMNLJudge
from benchmarks.taubench.loader import DataStore
from benchmarks.taubench.orchestrator import run_simulation
from benchmarks.taubench.participants import TimedAgent, build_agent, build_user, rollout_factory
from benchmarks.taubench.results import (
    AgentInfo,
    EnvironmentInfo,
    Info,
    Results,
    SimulationRun,
    TerminationReason,
    UserInfo,
)
from benchmarks.taubench.run_config import SCRIPTED_USER, RunConfig
from benchmarks.taubench.run_output import SUMMARY_FILE, git_commit, load_previous, summary, write_run
from benchmarks.taubench.tasks import Task
from benchmarks.taubench.tool_defs import load_catalog
from gats import GatsConfig
from inference.gecko import GeckoClient, GeckoError
from inference.tools import ToolCatalog
from utils.llm import LLMClient, LLMInfrastructureError, create_client

INFRASTRUCTURE_ERRORS: tuple[type[BaseException], ...] = (LLMInfrastructureError, GeckoError, GatsUnavailableError)
Progress = Callable[[int, int, Optional[float]], None]


def select_tasks(store: DataStore, config: RunConfig) -> list[Task]:
    """The tasks of the run: the split, then `task_ids` (in the given order), then the first `num_tasks`.

    Raises:
        KeyError: a requested id is not in the split.
    """
    tasks = store.tasks(config.domain, config.task_set, config.split)
    if config.task_ids:
        by_id = {t.id: t for t in tasks}
        missing = [i for i in config.task_ids if i not in by_id]
        if missing:
            raise KeyError(f"tasks not in {config.domain} {config.task_set} {config.split}: {', '.join(missing)}")
        tasks = [by_id[i] for i in config.task_ids]
    return tasks[: config.num_tasks] if config.num_tasks else tasks


RESUME_KEYS = ("domain", "task_set", "agent_llm", "user_llm", "gats_mode", "seed")


def check_resumable(config: RunConfig, run_dir: Path) -> None:
    """Refuse to resume a run made with a different domain, task set, models, mode or seed.

    Raises:
        ValueError: a setting differs.
    """
    previous = json.loads((run_dir / SUMMARY_FILE).read_text())["run"]["config"]
    current = config.public()
    changed = [k for k in RESUME_KEYS if previous.get(k) != current.get(k)]
    if changed:
        raise ValueError(f"cannot resume {run_dir}: {', '.join(f'{k} was {previous.get(k)!r}' for k in changed)}")


def stderr_progress(done: int, total: int, mean_reward: Optional[float]) -> None:
    """A one-line progress bar on stderr with the running mean reward."""
    width = 30
    filled = int(width * done / total) if total else width
    reward = "-" if mean_reward is None else f"{mean_reward:.3f}"
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} reward {reward}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


@dataclass
class _Run:
    """Mutable state of one batch (owned by `run_batch`, never shared across runs)."""

    config: RunConfig
    runtime: DomainRuntime
    catalog: ToolCatalog
    tasks: dict[str, Task]
    run_dir: Path
    info: Info
    run_info: dict[str, Any]
    simulations: list[SimulationRun] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def write(self) -> None:
        used = {s.task_id for s in self.simulations}
        results = Results(info=self.info, tasks=[t for t in self.tasks.values() if t.id in used],
                          simulations=sorted(self.simulations, key=lambda s: (s.task_id, s.trial or 0)))
        write_run(self.run_dir, results, summary(self.run_info, self.simulations, self.usage))


def _info(config: RunConfig, runtime: DomainRuntime, store: DataStore) -> Info:
    agent_impl = config.agent_llm if config.agent_is_scripted else "llm_agent"
    if config.gats_mode == "hybrid":
        agent_impl = f"gats_hybrid_{agent_impl}"
    user_impl = "scripted_user" if config.user_llm == SCRIPTED_USER else "user_simulator"
    return Info(
        git_commit=git_commit(), num_trials=config.num_trials, max_steps=config.max_steps,
        max_errors=config.max_errors, seed=config.seed,
        user_info=UserInfo(implementation=user_impl, llm=None if config.user_llm == SCRIPTED_USER else config.user_llm,
                           global_simulation_guidelines=store.user_guidelines()),
        agent_info=AgentInfo(implementation=agent_impl, llm=None if config.agent_is_scripted else config.agent_llm),
        environment_info=EnvironmentInfo(domain_name=runtime.name, policy=runtime.policy),
        data_version=store.data_version(config.domain, config.task_set),
    )


async def _job(run: _Run, task: Task, trial: int, client: Optional[LLMClient], gecko: Optional[GeckoClient],
               gats_config: GatsConfig, evaluator: Evaluator, store: DataStore) -> SimulationRun:
    config, runtime = run.config, run.runtime
    seed = config.seed + trial
    environment = runtime.environment()
    agent = build_agent(config, task, runtime, run.catalog, client, seed)
    user = build_user(config, task, store.user_guidelines(), client, seed)
    gats: Optional[HybridGats] = None
    wrapped: Any = agent
    if config.gats_mode == "hybrid":
        assert gecko is not None
        gats = HybridGats(gecko, runtime, run.catalog, environment, rollout_factory(config, task, runtime, client),
                          gats_config)
        wrapped = GatsAgent(agent, gats)
    wrapped = TimedAgent(wrapped, config.agent_timeout)  # bounds rehearsals + reply together
    try:
        simulation = await run_simulation(task, wrapped, user, environment, max_steps=config.max_steps,
                                          max_errors=config.max_errors, trial=trial, seed=seed,
                                          infrastructure_errors=INFRASTRUCTURE_ERRORS)
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
    simulation.info = {**(simulation.info or {}), **extra}
    judge_usage_before = len(getattr(evaluator.judge, "usage", []))
    simulation.reward_info = await evaluator.grade(task, simulation)
    usage.extend(getattr(evaluator.judge, "usage", [])[judge_usage_before:])
    async with run.lock:
        run.usage.extend(usage)
    return simulation


async def run_batch(config: RunConfig, *, store: Optional[DataStore] = None, client: Optional[LLMClient] = None,
                    gecko: Optional[GeckoClient] = None, progress: Optional[Progress] = stderr_progress) -> Path:
    """Run (or resume) a tau2 run; returns its directory.

    Args:
        config: the run (`gecko_url` must be a URL when `gats_mode` is hybrid).
        store: the data store (default: a new one).
        client: the LLM client (default: one from `create_client` when a role needs an LLM).
        gecko: the Gecko client for hybrid mode (default: one for `config.gecko_url`, closed at the end).
        progress: called after every job with (done, total, running mean reward).

    Raises:
        GeckoError: hybrid mode and Gecko does not answer at start.
    """
    store = store or DataStore()
    runtime = DomainRuntime(config.domain, store, config.task_set)
    catalog = load_catalog(runtime)
    tasks = select_tasks(store, config)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = config.resume or (config.output_dir / config.run_name(stamp))
    run = _Run(config, runtime, catalog, {t.id: t for t in tasks}, run_dir, _info(config, runtime, store),
               {"runner": "run_taubench.py", "config": config.public(), "run_dir": str(run_dir)})
    done_keys: set[tuple[str, int]] = set()
    if config.resume is not None and (config.resume / "results.json").exists():
        check_resumable(config, config.resume)
        run.simulations = [s for s in load_previous(config.resume) if s.task_id in run.tasks]
        done_keys = {(s.task_id, s.trial or 0) for s in run.simulations}
    jobs = [(t, k) for k in range(config.num_trials) for t in tasks if (t.id, k) not in done_keys]
    needs_llm = not config.agent_is_scripted or config.user_llm != SCRIPTED_USER or config.effective_judge
    own_client = client is None and bool(needs_llm)
    if own_client:
        client = create_client(cache_path=config.llm_cache)
    judge = LLMNLJudge(client, config.effective_judge) if client is not None and config.effective_judge else None
    evaluator = Evaluator(runtime, judge)
    own_gecko = gecko is None and config.gats_mode == "hybrid"
    if own_gecko:
        gecko = GeckoClient(config.gecko_url, timeout_s=max(config.agent_timeout, 30.0))
    gats_config = GatsConfig(max_retries=config.gats_retries, judge=True, generate_checklist=True)
    if gecko is not None and config.gats_mode == "hybrid":
        health = await gecko.health()
        # with LLM engines, read each rehearsal's server-side usage (responder, state, validator) for the costs
        gats_config = dataclasses.replace(gats_config, collect_server_usage=not health.offline)
    queue: asyncio.Queue[tuple[Task, int]] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    total, started = len(run.simulations) + len(jobs), time.perf_counter()
    run.run_info["started_jobs"] = len(jobs)

    def report() -> None:
        graded = [s.reward_info.reward for s in run.simulations
                  if s.reward_info is not None and s.reward_info.graded
                  and s.termination_reason != TerminationReason.INFRASTRUCTURE_ERROR]
        if progress is not None:
            progress(len(run.simulations), total, sum(graded) / len(graded) if graded else None)

    async def worker() -> None:
        while not queue.empty():
            task, trial = queue.get_nowait()
            simulation = await _job(run, task, trial, client, gecko, gats_config, evaluator, store)
            async with run.lock:
                run.simulations.append(simulation)
                run.run_info["wall_time_s"] = round(time.perf_counter() - started, 3)
                await asyncio.to_thread(run.write)
                report()

    try:
        report()
        await asyncio.gather(*(worker() for _ in range(min(config.workers, max(1, len(jobs))))))
        async with run.lock:
            run.run_info["wall_time_s"] = round(time.perf_counter() - started, 3)
            await asyncio.to_thread(run.write)
    finally:
        if own_gecko and gecko is not None:
            await gecko.aclose()
        if own_client and client is not None:
            await client.aclose()
    return run_dir
