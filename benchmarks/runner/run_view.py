"""What `gecko view RUN_DIR` shows of a run directory, finished or still running: the tasks table and one task's
GATS attempts side by side, computed from the directory's own files (no server, no benchmark package).

The directory is read again whenever one of its files changed (size or modification time), so a running run's
new tasks appear on the next request. A task's page holds, per turn (one for single-turn tasks), its attempts
with their calls, verdicts and the feedback each was given, what changed from one attempt's calls to the next,
and the turn's real execution when the trace has one (BFCL multi-turn). The official verdict and the ground
truth are the benchmark's to add (`benchmarks.registry.Registration.details`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.runner.report import RunFiles, RunReport, attempts_by_turn, load_run, read_run
from benchmarks.runner.rundir import CONFIG_FILE, SUMMARY_FILE

TASKS_FILE = "tasks.jsonl"
Details = Callable[[Path, str, dict[str, Any], dict[str, Any]], dict[str, Any]]
"""A benchmark's addition to one task's page: (run dir, key, checkpoint entry, trace) → `official`, `ground_truth`
and, where the trace has none, `real` (what was executed for real)."""


def _signature(path: Path) -> tuple[tuple[str, int, int], ...]:
    names = [CONFIG_FILE, TASKS_FILE, SUMMARY_FILE, *sorted(p.name for p in path.glob("traces_*.jsonl"))]
    out = []
    for name in names:
        try:
            stat = (path / name).stat()
        except OSError:
            continue
        out.append((name, stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def call_changes(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What changed from one attempt's calls to the next, call by call in order: `same`, `changed` (the same tool,
    with the arguments that differ as `[before, after]`), `replaced` (another tool), `added`, `removed`; and whether
    each call was accepted before and after."""
    changes: list[dict[str, Any]] = []
    for index in range(max(len(before), len(after))):
        old = before[index] if index < len(before) else None
        new = after[index] if index < len(after) else None
        if old is None or new is None:
            call = new if old is None else old
            assert call is not None
            changes.append({"index": index, "kind": "added" if old is None else "removed", "name": call.get("name"),
                            "ok": [None if old is None else old.get("ok"), None if new is None else new.get("ok")]})
            continue
        ok = [old.get("ok"), new.get("ok")]
        if old.get("name") != new.get("name"):
            changes.append({"index": index, "kind": "replaced", "name": [old.get("name"), new.get("name")], "ok": ok})
            continue
        old_args, new_args = old.get("arguments") or {}, new.get("arguments") or {}
        if not isinstance(old_args, dict) or not isinstance(new_args, dict):
            old_args, new_args = {"": old_args}, {"": new_args}
        differ = {name: [old_args.get(name), new_args.get(name)] for name in sorted(set(old_args) | set(new_args))
                  if old_args.get(name) != new_args.get(name) or (name in old_args) != (name in new_args)}
        changes.append({"index": index, "kind": "changed" if differ else "same", "name": new.get("name"),
                        "arguments": differ, "ok": ok})
    return changes


def _turns(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Each turn's attempts (marked best), the changes between consecutive attempts and, if any, its real run."""
    attempts = attempts_by_turn(trace)
    listed = trace.get("turns")
    raw_turns: list[Any] = listed if isinstance(listed, list) else [trace]
    turns = []
    for index, turn_attempts in enumerate(attempts):
        raw: dict[str, Any] = raw_turns[index] if index < len(raw_turns) and isinstance(raw_turns[index], dict) else {}
        nested = raw.get("simulated")
        simulated: dict[str, Any] = nested if isinstance(nested, dict) else raw
        turns.append({
            "index": raw.get("index", index), "status": raw.get("status"), "error": raw.get("error"),
            "checklist": simulated.get("checklist"), "checklist_error": simulated.get("checklist_error"),
            "attempts": turn_attempts,
            "changes": [call_changes(a.get("calls") or [], b.get("calls") or [])
                        for a, b in zip(turn_attempts, turn_attempts[1:], strict=False)],
            "real": raw.get("real"), "divergence": raw.get("divergence"), "at_message": raw.get("at_message"),
        })
    return turns


class RunView:
    """One run directory as the viewer shows it (thread-safe; re-read when its files change)."""

    def __init__(self, path: Path, details: Details | None = None) -> None:
        self.path = path
        self.details = details
        """What the benchmark adds to a task's page (`Details`), if anything."""
        self._lock = threading.Lock()
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._files: RunFiles | None = None
        self._report: RunReport | None = None
        read_run(path)  # a path that is not a run directory fails here, before anything is served

    def _current(self) -> tuple[RunFiles, RunReport]:
        with self._lock:
            signature = _signature(self.path)
            if self._files is None or self._report is None or signature != self._signature:
                self._files = read_run(self.path)
                self._report = load_run(self.path, self._files)
                self._signature = signature
            return self._files, self._report

    def _running(self) -> bool:
        """No summary yet, or tasks finished after it was written (a run in progress, or one stopped hard)."""
        try:
            summary = (self.path / SUMMARY_FILE).stat().st_mtime_ns
        except OSError:
            return True
        return (self.path / TASKS_FILE).stat().st_mtime_ns > summary

    def overview(self) -> dict[str, Any]:
        """The run's facts and one row per task (key, group, status, score, attempts, tokens, cost, seconds)."""
        files, report = self._current()
        config = files.config
        return {
            "name": report.name, "path": str(self.path), "benchmark": report.benchmark, "model": report.model,
            "max_retries": report.max_retries, "started_utc": config.get("started_utc"), "running": self._running(),
            "accuracy": report.accuracy, "groups": report.groups,
            "tasks": [{"key": t.key, "group": t.group, "status": t.status, "score": t.score,
                       "attempts": t.attempt_count, "turns": len(t.turns), "tokens": t.tokens,
                       "cost_usd": round(t.cost_usd, 6), "seconds": round(t.seconds, 3), "reason": t.reason}
                      for t in report.tasks],
        }

    def task(self, key: str) -> dict[str, Any] | None:
        """One task's page (None for a key the run does not have)."""
        files, report = self._current()
        entry = files.entries.get(key)
        if entry is None:
            return None
        row = next(t for t in report.tasks if t.key == key)
        trace = files.traces.get(key, {})
        recorded = entry.get("record")
        record: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
        page: dict[str, Any] = {
            "key": key, "group": row.group, "status": row.status, "score": row.score, "seconds": row.seconds,
            "reason": row.reason, "tokens": row.tokens, "cost_usd": row.cost_usd, "finished_utc": entry.get("finished_utc"),
            "benchmark": report.benchmark, "turns": _turns(trace), "answer": record.get("result"),
            "trace_status": trace.get("status"), "trace_error": trace.get("error"),
            "official": None, "ground_truth": None, "real": None,
        }
        if self.details is not None:
            try:
                page.update(self.details(self.path, key, entry, trace))
            except Exception as exc:  # noqa: BLE001 - the rest of the page is still worth showing
                page["details_error"] = f"{type(exc).__name__}: {exc}"
        return page
