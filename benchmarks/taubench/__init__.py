"""tau2-bench airline and retail, in-repo: pinned data, domain tools, the half-duplex loop and the
official reward (see README.md).

Typical offline use:

    store = DataStore()                                   # verified data, parsed once
    runtime = DomainRuntime("airline", store, "v1")       # one per domain and task set
    task = store.task("airline", "5")
    run = await run_simulation(task, oracle_agent(task), ScriptedUser.from_task(task), runtime.environment())
    run.reward_info = evaluate(runtime, task, run.messages, run.termination_reason)
"""

from benchmarks.taubench.domain_tools import DomainTools, Kind, ToolOutcome, ToolType
from benchmarks.taubench.environment import DomainRuntime, Environment, WriteCall
from benchmarks.taubench.evaluate import Evaluator, NLJudge, evaluate, evaluate_simulation
from benchmarks.taubench.loader import DEFAULT_TASK_SET, DataError, DataProvenance, DataStore
from benchmarks.taubench.messages import (
    AssistantMessage,
    Message,
    MessageToolCall,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from benchmarks.taubench.metrics import Metrics, compute_metrics, pass_hat_k
from benchmarks.taubench.orchestrator import (
    DEFAULT_MAX_ERRORS,
    DEFAULT_MAX_STEPS,
    GREETING,
    STOP_TOKENS,
    Agent,
    User,
    run_simulation,
    user_view,
)
from benchmarks.taubench.results import (
    NLAssertionCheck,
    Results,
    RewardInfo,
    SimulationRun,
    TerminationReason,
)
from benchmarks.taubench.scripted import ScriptedAgent, ScriptedUser, noop_agent, oracle_agent
from benchmarks.taubench.tasks import RewardType, SplitName, Task, TaskSet, render_user_scenario

__all__ = [
    "DEFAULT_MAX_ERRORS", "DEFAULT_MAX_STEPS", "DEFAULT_TASK_SET", "GREETING", "STOP_TOKENS", "Agent",
    "AssistantMessage", "DataError", "DataProvenance", "DataStore", "DomainRuntime", "Environment", "Evaluator",
    "Kind", "Message", "Metrics", "NLAssertionCheck", "NLJudge", "Results", "RewardInfo", "RewardType",
    "ScriptedAgent", "ScriptedUser", "SimulationRun", "SplitName", "SystemMessage", "Task", "TaskSet",
    "TerminationReason", "MessageToolCall", "DomainTools", "ToolMessage", "ToolOutcome", "ToolType", "User", "UserMessage",
    "WriteCall", "compute_metrics", "evaluate", "evaluate_simulation", "noop_agent", "oracle_agent", "pass_hat_k",
    "render_user_scenario", "run_simulation", "user_view",
]
