"""`RunOptions`: how a run is carried out, the same for every benchmark. None of it changes results."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_STOP_AFTER_UNTESTED = 10
"""The circuit breaker's default: this many untested tasks in a row stop the run (the infrastructure is down)."""
AUTO_GECKO = "auto"
"""`--gecko-url auto`: start a local Gecko for the run (the benchmark says on which toolkits)."""


@dataclass(frozen=True)
class RunOptions:
    """Operational settings of a run (recorded in `config.json` without secrets; free to change on resume)."""

    output_dir: Path
    """New run directories go under it (`<output_dir>/<UTC time>_<label>/`)."""
    resume: Path | None = None
    """An earlier run directory to continue in place: its done tasks are skipped, the others run."""
    workers: int = 8
    """Tasks run concurrently."""
    gecko_url: str = ""
    """Gecko's base URL, or `auto`."""
    gecko_api_key: str | None = None
    """Bearer key when Gecko runs with `--api-key`."""
    llm_cache: Path | None = None
    """SQLite file of the LLM reply cache; None: no cache."""
    stop_after_untested: int = DEFAULT_STOP_AFTER_UNTESTED
    """Circuit breaker: stop taking new tasks after this many untested tasks in a row (0: never)."""
    debug: bool = False
    """Keep Gecko sessions, log at DEBUG, and stop on the first task that raises."""
    verbose: bool = False
    """One line per finished task."""
    progress: bool = True
    """A progress bar on stderr."""
    probe_models: bool = True
    """Preflight: one tiny real request per configured model (tests that script the LLM client turn it off)."""
    llm_timeout_s: float | None = None
    """Seconds per LLM request of the run's agents (`--llm-timeout`); None: the LLM client's default."""

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1 (got {self.workers})")
        if self.stop_after_untested < 0:
            raise ValueError(f"stop_after_untested must be 0 (off) or more (got {self.stop_after_untested})")
        if self.llm_timeout_s is not None and self.llm_timeout_s <= 0:
            raise ValueError(f"--llm-timeout must be more than 0 seconds (got {self.llm_timeout_s})")

    def public(self) -> dict[str, Any]:
        """JSON form for `config.json` (no secrets)."""
        return {
            "output_dir": str(self.output_dir), "resume": None if self.resume is None else str(self.resume),
            "workers": self.workers, "gecko_url": self.gecko_url, "gecko_api_key": bool(self.gecko_api_key),
            "llm_cache": None if self.llm_cache is None else str(self.llm_cache),
            "stop_after_untested": self.stop_after_untested, "debug": self.debug, "verbose": self.verbose,
            "progress": self.progress, "probe_models": self.probe_models, "llm_timeout_s": self.llm_timeout_s,
        }
