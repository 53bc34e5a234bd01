"""The checkpoint of a run: `tasks.jsonl`, one durable line per finished task, the one source of truth.

A line holds the task's key, group, status (`done`, `untested`, `errored`), reason, score, the benchmark's
record, its LLM usage and whether its trace was written first. A key may appear several times (an untested task
rerun by `--resume`): the last line wins. Resuming skips the keys whose last status is `done` (and whose trace is
on disk) and runs the rest; the official files (BFCL result
files, tau2 `results.json`) are written from the last line of every key, so they can always be rebuilt.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchmarks.runner.files import JsonLinesAppender, read_json_lines
from benchmarks.runner.protocol import TaskOutcome, TaskStatus, WorkItem

LEDGER_FILE = "tasks.jsonl"
_ERRORS: tuple[type[Exception], ...] = (ValidationError, ValueError)


class LedgerEntry(BaseModel):
    """One line of `tasks.jsonl`: how one run of one task ended."""

    model_config = ConfigDict(frozen=True)

    key: str
    group: str
    status: TaskStatus
    reason: str | None = None
    """Why the task is untested or errored."""
    score: float | None = None
    seconds: float = 0.0
    """Wall time of the task."""
    finished_utc: str = ""
    info: dict[str, Any] = Field(default_factory=dict)
    usage: list[dict[str, Any]] = Field(default_factory=list)
    record: Any = None
    """The benchmark's result record (JSON)."""
    traced: bool | None = None
    """True: the task's trace line was written (durably) before this line; False: the benchmark gave no trace;
    None: a line written before checkpoints said so (its trace is looked up in the trace files)."""

    @classmethod
    def of(cls, item: WorkItem, outcome: TaskOutcome, seconds: float, finished_utc: str) -> LedgerEntry:
        """The entry for a task that just finished."""
        return cls(key=item.key, group=item.group, status=outcome.status, reason=outcome.reason,
                   score=outcome.score, seconds=round(seconds, 6), finished_utc=finished_utc,
                   info=dict(outcome.info), usage=[dict(u) for u in outcome.usage], record=outcome.record,
                   traced=outcome.trace is not None)

    def row(self) -> dict[str, Any]:
        """The task's row in `summary.json` (everything but the record and the usage)."""
        return {"key": self.key, "group": self.group, "status": self.status, "reason": self.reason,
                "score": self.score, "seconds": self.seconds, **self.info}


def _parse(line: str) -> LedgerEntry:
    return LedgerEntry.model_validate_json(line)


def read_ledger(path: Path) -> list[LedgerEntry]:
    """Every line of a checkpoint file, in order ([] when it does not exist).

    Raises:
        CorruptLinesError: A line before the last is not an entry.
    """
    return read_json_lines(path, _parse, _ERRORS)


def resumable_done(entries: Mapping[str, LedgerEntry], traced_keys: set[str]) -> set[str]:
    """The keys a resumed run skips: done, and with their trace on disk when they had one (a task whose `done`
    line outlived its trace, as an interrupt could leave before traces came first, is run again).

    Args:
        entries: The last entry of every key.
        traced_keys: The keys that have a line in the run's trace files.
    """
    return {key for key, entry in entries.items()
            if entry.status == "done" and (entry.traced is False or key in traced_keys)}


def latest(entries: Iterable[LedgerEntry]) -> dict[str, LedgerEntry]:
    """The last entry of every key, in the order keys first appeared."""
    out: dict[str, LedgerEntry] = {}
    for entry in entries:
        out[entry.key] = entry
    return out


class Ledger:
    """The checkpoint of one run directory, open for appending.

    Args:
        path: `<run dir>/tasks.jsonl` (continued if it exists).

    Raises:
        CorruptLinesError: The existing file has a bad line before its end.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries = read_ledger(path)
        self._appender = JsonLinesAppender(path, _parse, _ERRORS)
        self._lock = threading.Lock()
        """Guards the file line and `_entries` together (appends may come from worker threads)."""

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every line so far (earlier runs' and this run's)."""
        with self._lock:
            return tuple(self._entries)

    def latest(self) -> dict[str, LedgerEntry]:
        """The last entry of every key."""
        return latest(self.entries)

    def append(self, entry: LedgerEntry) -> None:
        """Add one entry as a durable line (safe to call from worker threads)."""
        with self._lock:  # the file and `entries` never disagree for a reader
            self._appender.append(entry.model_dump_json())
            self._entries.append(entry)

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._appender.close()


def usage_records(entries: Iterable[LedgerEntry]) -> list[Mapping[str, Any]]:
    """The LLM usage of every entry (every attempt at every task, superseded ones included: they were paid)."""
    return [record for entry in entries for record in entry.usage]

