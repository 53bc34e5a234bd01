"""The curator's filters, in order, each drop counted by reason (`ExportReport`).

```
selection (benchmark, category, model) → test tasks (unless --allow-test-tasks) → first round → outcome
(--filter; a pair's chosen side must have succeeded) → identical pair → exact duplicate → near duplicate
→ --verified (gecko verify's replay) → --max-per-task
```
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from benchmarks.data_export.model import Row

Outcome = Literal["success", "failure", "all"]


@dataclass(frozen=True)
class FilterOptions:
    """What to keep."""

    outcome: Outcome = "success"
    first_round: bool = False
    benchmarks: frozenset[str] = frozenset()
    """Keep only these benchmarks (empty: all); likewise `categories` and `models`."""
    categories: frozenset[str] = frozenset()
    models: frozenset[str] = frozenset()
    allow_test_tasks: bool = False
    dedup: bool = True
    near_dedup: bool = True
    verified: bool = False
    max_per_task: int | None = None


@dataclass
class KindCounts:
    """Candidates, kept and drops per reason of one row kind."""

    candidates: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    def public(self) -> dict[str, Any]:
        """JSON form."""
        return {"candidates": self.candidates, "kept": self.kept, "dropped": dict(sorted(self.dropped.items()))}


@dataclass
class ExportReport:
    """What the filters did, per row kind."""

    kinds: dict[str, KindCounts] = field(default_factory=lambda: defaultdict(KindCounts))

    def drop(self, row: Row, reason: str) -> None:
        """Count one drop."""
        self.kinds[row.kind].dropped[reason] += 1

    def public(self) -> dict[str, Any]:
        """JSON form."""
        return {kind: counts.public() for kind, counts in sorted(self.kinds.items())}


def _select(options: FilterOptions, row: Row) -> str | None:
    task = row.episode.task
    if options.benchmarks and task.benchmark not in options.benchmarks:
        return "benchmark_not_selected"
    if options.categories and task.group not in options.categories:
        return "category_not_selected"
    if options.models and task.model not in options.models:
        return "model_not_selected"
    if task.contaminates and not options.allow_test_tasks:
        return "test_task"
    if options.first_round and (row.kind == "correction" or row.episode.turn > 0):
        return "not_first_round"
    return None


def _outcome(options: FilterOptions, row: Row) -> str | None:
    if row.kind == "dpo":  # the chosen side passed: the official verdict where there is one, and GATS's own
        chosen = row.episode.attempt(row.attempt)
        passed = row.success is True and (chosen is None or chosen.success is not False)
        return None if passed else "chosen_not_successful"
    if row.success is None:
        return None if options.outcome == "all" else "no_verdict"
    if options.outcome == "success" and not row.success:
        return "failure"
    if options.outcome == "failure" and row.success:
        return "success"
    return None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def exact_key(row: Row) -> str:
    """The row's training content (fields and tools) as a digest."""
    return hashlib.sha256(_canonical([row.data, row.episode.tools]).encode()).hexdigest()


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NOISE = re.compile(r"[^a-z0-9 ]+")
_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", _NOISE.sub(" ", _NUMBER.sub("0", text.lower()))).strip()


def near_key(row: Row) -> str:
    """The digest of the row's text with case, punctuation, spacing and numbers ignored, and its tools by name:
    rows that differ only in such details (a template's numbers, call ids, formatting) share it."""
    texts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in sorted(value.items()):
                if key not in ("id", "tool_call_id"):
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif value is not None:
            texts.append(str(value))

    walk(row.data)
    names = sorted(str((t.get("function") or {}).get("name")) for t in row.episode.tools)
    return hashlib.sha256(_normal(" ".join(texts) + " | " + " ".join(names)).encode()).hexdigest()


def _dedup(rows: Iterable[Row], key: Callable[[Row], str], reason: str, report: ExportReport) -> list[Row]:
    seen: set[tuple[str, str]] = set()
    kept = []
    for row in rows:
        digest = (row.kind, key(row))
        if digest in seen:
            report.drop(row, reason)
            continue
        seen.add(digest)
        kept.append(row)
    return kept


Verifier = Callable[[list[Row]], list[str | None]]
"""Rows → per row None (every call replays clean) or the reason it does not."""


def apply_filters(rows: Iterable[Row], options: FilterOptions, report: ExportReport,
                  verifier: Verifier | None = None) -> list[Row]:
    """The rows every filter keeps, in order; every other row is counted in `report` with its reason.

    Raises:
        ValueError: `options.verified` without a verifier.
    """
    kept: list[Row] = []
    for row in rows:
        report.kinds[row.kind].candidates += 1
        reason = _select(options, row) or _outcome(options, row)
        if reason is None and row.kind == "dpo" and row.data["chosen"] == row.data["rejected"]:
            reason = "identical_pair"
        if reason is not None:
            report.drop(row, reason)
        else:
            kept.append(row)
    if options.dedup:
        kept = _dedup(kept, exact_key, "duplicate", report)
    if options.near_dedup:
        kept = _dedup(kept, near_key, "near_duplicate", report)
    if options.verified:
        if verifier is None:
            raise ValueError("--verified needs a verifier")
        verdicts = verifier(kept)
        for row, problem in zip(kept, verdicts, strict=True):
            if problem is not None:
                report.drop(row, f"not_verified:{problem}")
        kept = [row for row, problem in zip(kept, verdicts, strict=True) if problem is None]
    if options.max_per_task is not None:
        per_task: Counter[tuple[str, str, str]] = Counter()
        capped = []
        for row in kept:
            task = (row.kind, row.episode.task.benchmark, row.episode.task.source_task_id)
            per_task[task] += 1
            if per_task[task] > options.max_per_task:
                report.drop(row, "max_per_task")
            else:
                capped.append(row)
        kept = capped
    for row in kept:
        report.kinds[row.kind].kept += 1
    return kept
