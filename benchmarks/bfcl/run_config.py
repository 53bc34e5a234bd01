"""The configuration of a BFCL run, single- or multi-turn (recorded in the run directory's `config.json`).

How the run is carried out (workers, output directory, Gecko URL …) is `benchmarks.runner.RunOptions`;
these are the settings that decide which tasks run and what results they give.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchmarks.bfcl.agents import AgentSettings
from benchmarks.bfcl.categories import AGENTIC_CATEGORIES, MULTI_TURN_CATEGORIES, SINGLE_TURN_CATEGORIES
from benchmarks.runner.faults import checked_policy
from gats import GatsConfig
from inference.agents.backends import DEFAULT_AGENT_BACKEND, AgentBackend
from inference.agents.noise import DEFAULT_ERROR_RATE
from utils.roles import PLANNER

DEFAULT_MAX_RETRIES = 2


class BfclRunConfig(BaseModel):
    """A BFCL single-turn run (multi-turn runs use `MultiTurnRunConfig`, which only changes defaults)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    SELECTION: ClassVar[tuple[str, ...]] = ("categories", "ids", "num_tasks")
    """Fields that pick tasks (a resumed run may change them); the others change results."""
    CATEGORIES: ClassVar[tuple[str, ...]] = SINGLE_TURN_CATEGORIES
    """The categories this kind of run supports."""

    categories: tuple[str, ...] = Field(min_length=1)
    model: str
    """`scripted-oracle`, `scripted-noisy`, or an LLM alias."""
    ids: tuple[str, ...] | None = None
    """Task ids (full, or short ones like `3` for a single category); None: every task."""
    num_tasks: int | None = Field(None, ge=1)
    """Only the first N selected tasks of each category."""
    max_retries: int = Field(DEFAULT_MAX_RETRIES, ge=0)
    """GATS retries after the first attempt; 0 = the no-GATS baseline (one attempt, not judged)."""
    seed: int = 0
    """Seed of the noisy agent's errors."""
    error_rate: float = Field(DEFAULT_ERROR_RATE, ge=0.0, le=1.0)
    """Probability that the noisy agent corrupts a call."""
    max_steps: int = Field(10, ge=1)
    """Planner steps per attempt."""
    temperature: float | None = 0.0
    max_tokens: int = Field(PLANNER.max_tokens, ge=1)
    """Output cap of each planner completion."""
    generate_checklist: bool = False
    """A checklist per task from Gecko's judge model (else the judge's own)."""
    agent_backend: AgentBackend = DEFAULT_AGENT_BACKEND
    """What drives an LLM model: `planner` (ours) or `camel` (a CAMEL ChatAgent); scripted agents use neither."""
    faults: dict[str, Any] | None = None
    """The fault policy of `--faults` (JSON): every task runs clean and under it (`benchmarks.runner.faults`)."""

    @field_validator("faults")
    @classmethod
    def _valid_policy(cls, policy: dict[str, Any] | None) -> dict[str, Any] | None:
        return checked_policy(policy)

    @model_validator(mode="after")
    def _backend_needs_a_model(self) -> BfclRunConfig:
        if self.agent_backend != DEFAULT_AGENT_BACKEND and self.model.startswith("scripted-"):
            raise ValueError(f"--agent-backend {self.agent_backend} drives an LLM; {self.model} is a scripted agent")
        return self

    @field_validator("categories")
    @classmethod
    def _known_categories(cls, categories: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in categories if c not in cls.CATEGORIES]
        if unknown:
            raise ValueError(f"not a category of this runner: {', '.join(unknown)}; choose from "
                             f"{', '.join(cls.CATEGORIES)}")
        return categories

    def result_settings(self) -> dict[str, Any]:
        """The settings that change results (a resumed run must give the same)."""
        return {k: v for k, v in self.model_dump(mode="json").items() if k not in self.SELECTION}

    def gats(self) -> GatsConfig:
        """The GATS configuration of every task (of every turn, for multi-turn)."""
        return GatsConfig(max_retries=self.max_retries, generate_checklist=self.generate_checklist)

    def agents(self) -> AgentSettings:
        """How agents are built."""
        return AgentSettings(model=self.model, seed=self.seed, error_rate=self.error_rate,
                             max_steps=self.max_steps, temperature=self.temperature, max_tokens=self.max_tokens,
                             agent_backend=self.agent_backend)


class MultiTurnRunConfig(BfclRunConfig):
    """A BFCL multi-turn run."""

    CATEGORIES: ClassVar[tuple[str, ...]] = MULTI_TURN_CATEGORIES + AGENTIC_CATEGORIES
    categories: tuple[str, ...] = Field(("multi_turn_base",), min_length=1)
    max_steps: int = Field(20, ge=1)
    """Planner steps per run (the official per-turn limit is 20)."""
    generate_checklist: bool = True
    """A dynamic checklist per turn (the judge model's; with `rules` it is the request itself)."""
