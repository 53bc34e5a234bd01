"""Run directories (and RL-environment rollout files) read into `Episode`s.

A run directory names its benchmark in `config.json`; the benchmark's reader (`READERS`, `module:function`,
imported when a run of it is exported) turns one task's checkpoint line and trace into its episodes. A JSON Lines
file of environment rollouts (`scripts/env_rollout.py --trajectories`) is read by `env_source`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.data_export.model import Episode
from benchmarks.runner.report import RunFiles, read_run

READERS: dict[str, str] = {
    "bfcl": "benchmarks.data_export.bfcl_source:single_turn_episodes",
    "bfcl-multi": "benchmarks.data_export.bfcl_source:multi_turn_episodes",
    "openworld": "benchmarks.data_export.openworld_source:openworld_episodes",
    "tau2": "benchmarks.data_export.taubench_source:tau2_episodes",
}
"""Benchmark name (`config.json`'s `benchmark`) → the reader of one task: `(context, key, entry, trace) →
episodes`."""


class ExportSourceError(ValueError):
    """A path that cannot be exported (not a run directory, a benchmark without a reader, missing toolkits)."""


@dataclass
class SourceContext:
    """One run directory being read, with what its reader caches."""

    files: RunFiles
    toolkits_dir: Path | None = None
    """Where the run's toolkits are (None: the benchmark's default)."""
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def config(self) -> dict[str, Any]:
        """`config.json`."""
        return self.files.config

    @property
    def benchmark(self) -> str:
        """The run's benchmark name."""
        return str(self.config.get("benchmark") or "")

    @property
    def model(self) -> str:
        """The run's model (the planner / agent)."""
        config = self.config.get("config") or {}
        return str(config.get("model") or config.get("agent_llm") or config.get("agent") or "unknown")

    @property
    def run(self) -> str:
        """The run directory's name."""
        return self.files.path.name


Reader = Callable[[SourceContext, str, dict[str, Any], dict[str, Any]], Iterator[Episode]]


def _reader(benchmark: str) -> Reader:
    target = READERS.get(benchmark)
    if target is None:
        raise ExportSourceError(f"no exporter reads {benchmark!r} runs yet; readable: {', '.join(READERS)} and "
                                "environment rollout files (JSON Lines)")
    module, _, attribute = target.partition(":")
    reader: Reader = getattr(importlib.import_module(module), attribute)
    return reader


def read_source(path: Path, toolkits_dir: Path | None = None) -> tuple[str, Iterator[Episode]]:
    """The benchmark name of a run directory or rollout file, and its episodes (read lazily).

    Raises:
        ExportSourceError: `path` is neither a run directory of a readable benchmark nor a rollout file.
    """
    if path.is_file():
        from benchmarks.data_export.env_source import rollout_episodes

        return "env", rollout_episodes(path)
    try:
        files = read_run(path)
    except ValueError as exc:
        raise ExportSourceError(str(exc)) from None
    context = SourceContext(files, toolkits_dir)
    reader = _reader(context.benchmark)

    def episodes() -> Iterator[Episode]:
        for key, entry in files.entries.items():
            trace = files.traces.get(key)
            if entry.get("status") == "done" and trace is not None:
                yield from reader(context, key, entry, trace)

    return context.benchmark, episodes()
