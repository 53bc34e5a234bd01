"""`RunConfig`: everything a tau2 run needs, as the CLI (`run_taubench.py`) builds it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from benchmarks.taubench.orchestrator import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS
from benchmarks.taubench.tasks import SplitName, TaskSet

GatsMode = Literal["none", "hybrid"]
SCRIPTED_ORACLE = "scripted-oracle"
SCRIPTED_NOOP = "scripted-noop"
SCRIPTED_USER = "scripted"
SCRIPTED_AGENTS = (SCRIPTED_ORACLE, SCRIPTED_NOOP)
AUTO_GECKO = "auto"
RESULTS_ROOT = Path(__file__).resolve().parents[2] / "results" / "taubench"


@dataclass(frozen=True)
class RunConfig:
    """A tau2 run. `agent_llm` is a model alias or a scripted agent name; `user_llm` a model alias or
    `scripted`; `judge_llm` None means the agent's model (none for scripted agents)."""

    domain: str
    agent_llm: str = SCRIPTED_ORACLE
    user_llm: str = SCRIPTED_USER
    judge_llm: Optional[str] = None
    task_set: TaskSet = "v1"
    split: SplitName = "base"
    task_ids: Optional[tuple[str, ...]] = None
    num_tasks: Optional[int] = None
    num_trials: int = 1
    seed: int = 300
    workers: int = 1
    gats_mode: GatsMode = "hybrid"
    gats_retries: int = 2
    gecko_url: str = AUTO_GECKO
    agent_timeout: float = 360.0
    max_steps: int = DEFAULT_MAX_STEPS
    max_errors: int = DEFAULT_MAX_ERRORS
    output_dir: Path = RESULTS_ROOT
    resume: Optional[Path] = None
    debug: bool = False
    llm_cache: Optional[Path] = field(default=None)

    def __post_init__(self) -> None:
        if self.num_trials < 1 or self.workers < 1 or self.gats_retries < 0 or self.max_steps < 1:
            raise ValueError("num_trials, workers and max_steps must be >= 1 and gats_retries >= 0")

    @property
    def agent_is_scripted(self) -> bool:
        """Whether the agent is a scripted one (no LLM)."""
        return self.agent_llm in SCRIPTED_AGENTS

    @property
    def effective_judge(self) -> Optional[str]:
        """The NL judge model (None: NL-judged tasks are not graded)."""
        if self.judge_llm:
            return self.judge_llm
        return None if self.agent_is_scripted else self.agent_llm

    def run_name(self, timestamp: str) -> str:
        """`<timestamp>_<domain>_<models>_<mode>` with path-safe model names."""
        def safe(name: str) -> str:
            name = name.split("@", 1)[0].split(":", 1)[-1]  # `openai-compatible:<model>@<url>` → `<model>`
            return "".join(ch if ch.isalnum() or ch in "-." else "-" for ch in name)[:40]
        return f"{timestamp}_{self.domain}_{safe(self.agent_llm)}_user-{safe(self.user_llm)}_{self.gats_mode}"

    def public(self) -> dict[str, Any]:
        """JSON form, recorded in `summary.json`."""
        out = asdict(self)
        for key in ("output_dir", "resume", "llm_cache"):
            out[key] = None if out[key] is None else str(out[key])
        out["task_ids"] = list(self.task_ids) if self.task_ids else None
        return out
