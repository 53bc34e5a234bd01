"""The run directory: what a run was (full config, versions, git commit, Gecko's roles) and what it did
(traces per category, summary), beside the result files.

```
<output-dir>/results/<model_dir>/<group>/BFCL_v4_<category>_result.json   official layout; resumed in place
<output-dir>/score/<model_dir>/...                                         score files (evaluate's default)
<output-dir>/runs/<model_dir>/<UTC timestamp>/config.json                  this run's configuration
                                               traces_<category>.jsonl    one line per task: every attempt
                                               summary.json, run.log
```
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import threading
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from benchmarks.bfcl.export import model_dir_name
from utils.paths import REPO_ROOT

PACKAGES = ("gecko-gats", "bfcl-eval", "openai", "httpx")


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _git(*args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10,  # noqa: S603, S607
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None


def git_commit() -> dict[str, Any]:
    """The repository's HEAD commit and whether tracked files differ from it (read-only git commands)."""
    head = _git("rev-parse", "HEAD")
    if head is None or head.returncode != 0:
        return {"commit": None, "dirty": None}
    dirty = _git("diff-index", "--quiet", "HEAD", "--")
    return {"commit": head.stdout.strip(), "dirty": None if dirty is None else dirty.returncode != 0}


def versions() -> dict[str, Any]:
    """Python and package versions."""
    return {"python": platform.python_version(), **{name: _version(name) for name in PACKAGES}}


def results_dir(output_dir: Path) -> Path:
    """Where result files go (`--result-dir` of `python -m benchmarks.bfcl.evaluate`)."""
    return output_dir / "results"


def score_dir(output_dir: Path) -> Path:
    """Where score files go."""
    return output_dir / "score"


class RunDirectory:
    """One run's directory; trace lines are appended whole (one `write` each), safe across threads.

    Args:
        output_dir: `--output-dir`.
        model: `--model`.
    """

    def __init__(self, output_dir: Path, model: str) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        base = output_dir / "runs" / model_dir_name(model)
        path = base / stamp
        number = 1
        while path.exists():
            number += 1
            path = base / f"{stamp}-{number}"
        path.mkdir(parents=True)
        self.path = path
        self._lock = threading.Lock()

    def write_json(self, name: str, data: Any) -> Path:
        """Write `name` (JSON, indented)."""
        target = self.path / name
        target.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        return target

    def append_trace(self, category: str, trace: dict[str, Any]) -> None:
        """Append one task's trace to `traces_<category>.jsonl`."""
        line = json.dumps(trace, ensure_ascii=False, default=str) + "\n"
        with self._lock, (self.path / f"traces_{category}.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(line)

    def record_config(self, config: dict[str, Any]) -> Path:
        """Write `config.json`: the given config plus command line, versions and git commit."""
        return self.write_json("config.json", {**config, "argv": sys.argv, "versions": versions(), "git": git_commit(),
                                               "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
