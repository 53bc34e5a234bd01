"""BFCL's part of a task's page in `gecko view` (`benchmarks.runner.run_view`): the official verdict (the
bfcl-eval checker's, recorded with the task; the error messages of the official score file when it has been
written) and the ground truth (the category's possible answers, or for multi-turn the gold calls per turn)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.bfcl.categories import is_irrelevance
from benchmarks.bfcl.loader import load_category


@lru_cache(maxsize=16)
def _ground_truths(category: str) -> dict[str, Any]:
    return {task.id: task.ground_truth for task in load_category(category)}


def _score_file_failure(run_dir: Path, category: str, key: str) -> dict[str, Any] | None:
    for path in run_dir.glob(f"score/*/*/BFCL_v4_{category}_score.json"):
        try:
            failures = json.loads(path.read_text(encoding="utf-8")).get("failures") or []
        except (OSError, json.JSONDecodeError):
            continue
        return next((f for f in failures if isinstance(f, dict) and f.get("id") == key), None)
    return None


def task_details(run_dir: Path, key: str, entry: dict[str, Any], trace: dict[str, Any]) -> dict[str, Any]:
    """`official` and `ground_truth` of one BFCL task of a run (see the module docstring)."""
    category = str(entry.get("group") or "")
    score = trace.get("score") if isinstance(trace.get("score"), dict) else None
    official: dict[str, Any] | None = None
    if score is not None:
        official = {"checker": "bfcl-eval", "valid": score.get("valid"), "error_type": score.get("error_type")}
        failure = _score_file_failure(run_dir, category, key) if score.get("valid") is False else None
        if failure is not None:
            official.update(errors=failure.get("errors"), decoded=failure.get("decoded"))
    try:
        truth = _ground_truths(category).get(key)
    except (ValueError, KeyError, OSError):
        truth = None
    if truth is None and is_irrelevance(category):
        truth = "no call (an irrelevance task: correct when the model calls nothing)"
    return {"official": official, "ground_truth": truth}
