"""The files of a run directory, written atomically after every finished job: `results.json` (official
tau2 format) and `summary.json` (config, per-task rows, metrics, cost per role). `--resume` reads them back."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.taubench.metrics import compute_metrics
from benchmarks.taubench.results import Results, SimulationRun, TerminationReason
from utils.llm import UsageAggregator

RESULTS_FILE = "results.json"
SUMMARY_FILE = "summary.json"


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def git_commit() -> str:
    """The repository's HEAD commit, or `unknown` (read-only)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def load_previous(run_dir: Path) -> list[SimulationRun]:
    """The simulations of an earlier run that need no rerun (everything but infrastructure errors).

    Raises:
        FileNotFoundError: the directory holds no `results.json`.
    """
    results = Results.model_validate_json((run_dir / RESULTS_FILE).read_text())
    return [s for s in results.simulations if s.termination_reason != TerminationReason.INFRASTRUCTURE_ERROR]


def row(simulation: SimulationRun) -> dict[str, Any]:
    """One per-task row of `summary.json`."""
    info = simulation.reward_info
    gats = (simulation.info or {}).get("gats") or {}
    untested = simulation.termination_reason == TerminationReason.INFRASTRUCTURE_ERROR
    return {
        "task_id": simulation.task_id, "trial": simulation.trial, "seed": simulation.seed,
        "status": "untested" if untested else ("graded" if info is not None and info.graded else "not_graded"),
        "reward": None if untested or info is None or not info.graded else info.reward,
        "termination_reason": simulation.termination_reason.value, "duration_s": round(simulation.duration, 3),
        "error": (simulation.info or {}).get("error"),
        "gats": {k: v for k, v in gats.items() if k != "rehearsals"} or None,
        "llm_calls": (simulation.info or {}).get("llm_calls"),
    }


def summary(run_info: dict[str, Any], simulations: Sequence[SimulationRun], usage: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`summary.json`: run info, per-task rows, metrics over graded runs, usage and cost per role."""
    metrics = compute_metrics(simulations)
    roles = UsageAggregator(list(usage)).summary()
    return {
        "run": run_info,
        "metrics": metrics.model_dump(),
        "completed": len(simulations),
        "untested": [f"{s.task_id}#{s.trial}" for s in simulations
                     if s.termination_reason == TerminationReason.INFRASTRUCTURE_ERROR],
        "cost_by_role": {role: entry["total"] for role, entry in roles["roles"].items()},
        "cost_total": roles["total"],
        "rows": [row(s) for s in sorted(simulations, key=lambda s: (s.task_id, s.trial or 0))],
    }


def write_run(run_dir: Path, results: Results, summary_json: dict[str, Any]) -> None:
    """Both files, atomically."""
    write_atomic(run_dir / RESULTS_FILE, results.model_dump_json(indent=2))
    write_atomic(run_dir / SUMMARY_FILE, json.dumps(summary_json, indent=2, default=str))
