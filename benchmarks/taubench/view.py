"""tau2's part of a task's page in `gecko view` (`benchmarks.runner.run_view`): the official verdict (the
simulation's reward info: reward, DB check, action, communication and NL checks), the ground truth (the task's
evaluation criteria: expected actions, outputs to communicate, NL assertions) and the conversation as it really ran
(each GATS rehearsal is a turn of attempts in the trace; the executed replies are the simulation's messages)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.taubench.loader import DataStore

RESULTS_FILE = "results.json"


@lru_cache(maxsize=8)
def _criteria(domain: str, task_set: str) -> dict[str, Any]:
    return {task.id: task.evaluation_criteria.model_dump(mode="json") if task.evaluation_criteria else None
            for task in DataStore().tasks(domain, task_set, None)}  # type: ignore[arg-type]


def _recorded_criteria(run_dir: Path, task_id: str) -> dict[str, Any] | None:
    """The task's criteria as `results.json` recorded them (written at the end of a run)."""
    try:
        tasks = json.loads((run_dir / RESULTS_FILE).read_text(encoding="utf-8")).get("tasks") or []
    except (OSError, json.JSONDecodeError):
        return None
    found = next((t for t in tasks if isinstance(t, dict) and str(t.get("id")) == task_id), None)
    return None if found is None else found.get("evaluation_criteria")


def _message(message: dict[str, Any]) -> dict[str, Any]:
    return {k: message.get(k) for k in ("role", "content", "tool_calls", "turn_idx", "error") if message.get(k) is not None}


def task_details(run_dir: Path, key: str, entry: dict[str, Any], trace: dict[str, Any]) -> dict[str, Any]:
    """`official`, `ground_truth` and `real` (the conversation) of one tau2 task of a run."""
    recorded = entry.get("record")
    record: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    task_id = str(record.get("task_id") or key.split("#", 1)[0])
    reward = record.get("reward_info")
    official = None if not isinstance(reward, dict) else {
        "checker": "tau2 reward", "reward": reward.get("reward"), "graded": reward.get("graded"),
        **{k: reward.get(k) for k in ("reward_basis", "reward_breakdown", "db_check", "action_checks",
                                      "communicate_checks", "nl_assertions", "env_assertions") if reward.get(k)}}
    truth = _recorded_criteria(run_dir, task_id)
    if truth is None:
        try:
            settings = json.loads((run_dir / "config.json").read_text(encoding="utf-8")).get("config") or {}
            truth = _criteria(str(settings.get("domain")), str(settings.get("task_set") or "v1")).get(task_id)
        except (OSError, ValueError, KeyError):
            truth = None
    messages = [_message(m) for m in record.get("messages") or [] if isinstance(m, dict)]
    real = {"termination_reason": record.get("termination_reason"), "messages": messages} if record else None
    return {"official": official, "ground_truth": truth, "real": real}
