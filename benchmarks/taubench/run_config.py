"""`Tau2RunConfig`: what a tau2 run is (recorded in the run directory's `config.json`).

How the run is carried out (workers, output directory, Gecko URL …) is `benchmarks.runner.RunOptions`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchmarks.runner.faults import checked_policy
from benchmarks.taubench.orchestrator import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS
from benchmarks.taubench.tasks import SplitName, TaskSet
from inference.agents.backends import DEFAULT_AGENT_BACKEND, AgentBackend

GatsMode = Literal["none", "hybrid"]
SCRIPTED_ORACLE = "scripted-oracle"
SCRIPTED_NOOP = "scripted-noop"
SCRIPTED_USER = "scripted"
SCRIPTED_AGENTS = (SCRIPTED_ORACLE, SCRIPTED_NOOP)


class Tau2RunConfig(BaseModel):
    """A tau2 run. `agent_llm` is a model alias or a scripted agent name; `user_llm` a model alias or
    `scripted`; `judge_llm` None means the agent's model (none for scripted agents)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    SELECTION: ClassVar[tuple[str, ...]] = ("split", "task_ids", "num_tasks", "num_trials")
    """Fields that pick the jobs (a resumed run may change them); the others change results."""

    domain: Literal["airline", "retail", "telecom"]
    agent_llm: str = SCRIPTED_ORACLE
    user_llm: str = SCRIPTED_USER
    judge_llm: str | None = None
    task_set: TaskSet = "v1"
    split: SplitName = "base"
    task_ids: tuple[str, ...] | None = None
    num_tasks: int | None = Field(None, ge=1)
    num_trials: int = Field(1, ge=1)
    seed: int = 300
    """Trial k uses seed + k."""
    gats_mode: GatsMode = "hybrid"
    gats_retries: int = Field(2, ge=0)
    agent_timeout: float = Field(360.0, gt=0)
    """Seconds per agent reply (rehearsals included)."""
    max_steps: int = Field(DEFAULT_MAX_STEPS, ge=1)
    max_errors: int = Field(DEFAULT_MAX_ERRORS, ge=1)
    agent_backend: AgentBackend = DEFAULT_AGENT_BACKEND
    """What drives the GATS rehearsals of an LLM agent: `planner` (ours) or `camel` (a CAMEL ChatAgent). The agent
    that talks to the user is always the in-repo `LLMAgent` (the orchestrator drives it one message at a time)."""
    faults: dict[str, Any] | None = None
    """The fault policy of `--faults` (JSON): every job runs clean and under it (`benchmarks.runner.faults`)."""

    @field_validator("faults")
    @classmethod
    def _valid_policy(cls, policy: dict[str, Any] | None) -> dict[str, Any] | None:
        return checked_policy(policy)

    @model_validator(mode="after")
    def _known_scripted_names(self) -> Tau2RunConfig:
        if self.agent_llm.startswith("scripted") and self.agent_llm not in SCRIPTED_AGENTS:
            raise ValueError(f"unknown scripted agent {self.agent_llm!r}; choose {' or '.join(SCRIPTED_AGENTS)}")
        if self.agent_backend != DEFAULT_AGENT_BACKEND and self.agent_is_scripted:
            raise ValueError(f"--agent-backend {self.agent_backend} drives an LLM; {self.agent_llm} is a scripted agent")
        if self.user_llm.startswith("scripted") and self.user_llm != SCRIPTED_USER:
            raise ValueError(f"unknown scripted user {self.user_llm!r}; the scripted user is {SCRIPTED_USER!r}")
        return self

    @property
    def agent_is_scripted(self) -> bool:
        """Whether the agent is a scripted one (no LLM)."""
        return self.agent_llm in SCRIPTED_AGENTS

    @property
    def effective_judge(self) -> str | None:
        """The NL judge model (None: NL-judged tasks are not graded)."""
        if self.judge_llm:
            return self.judge_llm
        return None if self.agent_is_scripted else self.agent_llm

    def run_label(self) -> str:
        """`<domain>_<agent>_user-<user>_<mode>` (plus `_<backend>` for a non-default agent backend), path-safe."""
        def safe(name: str) -> str:
            name = name.split("@", 1)[0].split(":", 1)[-1]  # `openai-compatible:<model>@<url>` → `<model>`
            return "".join(ch if ch.isalnum() or ch in "-." else "-" for ch in name)[:40]
        backend = f"_{self.agent_backend}" if self.agent_backend != DEFAULT_AGENT_BACKEND else ""
        return f"{self.domain}_{safe(self.agent_llm)}_user-{safe(self.user_llm)}_{self.gats_mode}{backend}"

    def public(self) -> dict[str, Any]:
        """JSON form, recorded in `config.json`."""
        return self.model_dump(mode="json")

    def result_settings(self) -> dict[str, Any]:
        """The settings that change results (a resumed run must give the same)."""
        return {k: v for k, v in self.public().items() if k not in self.SELECTION}
