"""The end of a run: counts per group from the checkpoint, `summary.json`, the printed table, the exit code.

Every selected task ends in one state: `skipped` (done by an earlier run of the directory), `done`,
`untested`, `errored` (this run), or `pending` (never finished: interrupted, or stopped by the circuit
breaker). `score` is the mean score over every done task of the group, earlier runs included, i.e. over the
official files; `run_score` only over this run's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.runner.checkpoint import LedgerEntry, usage_records
from benchmarks.runner.faults import FAULT_GROUP_SUFFIX
from benchmarks.runner.protocol import Evaluation, WorkItem
from benchmarks.runner.robustness import robustness_block, robustness_lines
from utils.llm import UsageAggregator

NO_FAULTS, WITH_FAULTS = "no faults", "with faults"
"""The two arms of a `--faults` run, as the table's total rows name them."""
EXIT_OK = 0
"""The run finished and every selected task has a scored result."""
EXIT_ERROR = 1
"""Nothing ran, or the run could not go on: bad selection, failed preflight, a resume that does not match."""
EXIT_USAGE = 2
"""Bad command line (argparse)."""
EXIT_STOPPED = 3
"""The circuit breaker stopped the run (`--stop-after-untested`); resume it when the infrastructure is back."""
EXIT_UNSCORED = 4
"""The run finished, but some tasks have no scored result: untested (infrastructure failed) or errored (a bug).
They are listed with their reasons in `summary.json` and at the end of the output; `--resume` reruns them."""
EXIT_INTERRUPTED = 130
"""Ctrl-C: finished tasks are saved; `--resume <run dir>` goes on."""


@dataclass
class GroupSummary:
    """How the tasks of one group ended."""

    group: str
    selected: int = 0
    skipped: int = 0
    """Done by an earlier run of this directory."""
    done: int = 0
    untested: int = 0
    errored: int = 0
    pending: int = 0
    """Not finished (interrupted or stopped)."""
    score: float | None = None
    """Mean score over every done task (this run and earlier ones)."""
    run_score: float | None = None
    """Mean score over this run's done tasks."""
    seconds: float = 0.0
    """Sum of this run's task wall times."""


@dataclass(frozen=True)
class Unfinished:
    """A task that is untested or errored, and why."""

    key: str
    group: str
    reason: str | None


@dataclass
class RunSummary:
    """The outcome of a run (also written as `summary.json`)."""

    benchmark: str
    run_dir: Path
    groups: dict[str, GroupSummary] = field(default_factory=dict)
    total: GroupSummary = field(default_factory=lambda: GroupSummary("total"))
    """The counts over every group; its scores are means over every task."""
    arms: dict[str, GroupSummary] = field(default_factory=dict)
    """With `--faults`: the totals of the clean arm (`no faults`) and of the fault arm (`with faults`) apart;
    empty without faults."""
    untested: list[Unfinished] = field(default_factory=list)
    errored: list[Unfinished] = field(default_factory=list)
    interrupted: bool = False
    stopped: str | None = None
    """Why the circuit breaker stopped the run."""
    evaluation: Evaluation = field(default_factory=Evaluation)
    wall_time_s: float = 0.0
    cost: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    robustness: dict[str, Any] | None = None
    """The clean arm against the fault arm (`--faults`; `robustness.py`); None without faults."""

    @property
    def exit_code(self) -> int:
        """The process exit code of the run (see the `EXIT_*` constants)."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.stopped is not None:
            return EXIT_STOPPED
        if self.untested or self.errored or self.total.pending:
            return EXIT_UNSCORED
        return EXIT_OK

    def public(self) -> dict[str, Any]:
        """JSON form (`summary.json`)."""
        def unfinished(items: list[Unfinished]) -> list[dict[str, Any]]:
            return [{"key": u.key, "group": u.group, "reason": u.reason} for u in items]
        return {
            "benchmark": self.benchmark, "run_dir": str(self.run_dir), "interrupted": self.interrupted,
            "stopped": self.stopped, "exit_code": self.exit_code, "wall_time_s": round(self.wall_time_s, 3),
            "total": vars(self.total), "groups": {name: vars(g) for name, g in self.groups.items()},
            "arms": {name: vars(g) for name, g in self.arms.items()},
            "untested": unfinished(self.untested), "errored": unfinished(self.errored),
            "evaluation": dict(self.evaluation.metrics), "robustness": self.robustness, **self.cost,
            "tasks": self.rows,
        }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _add_up(total: GroupSummary, groups: Iterable[GroupSummary], scores: Mapping[str, list[float]],
            run_scores: Mapping[str, list[float]]) -> GroupSummary:
    """`total` with the counts of `groups` added and their scores' means (over their tasks, not their groups)."""
    members = list(groups)
    for group in members:
        for count in ("selected", "skipped", "done", "untested", "errored", "pending", "seconds"):
            setattr(total, count, getattr(total, count) + getattr(group, count))
    total.score = _mean([v for g in members for v in scores.get(g.group, [])])
    total.run_score = _mean([v for g in members for v in run_scores.get(g.group, [])])
    total.seconds = round(total.seconds, 3)
    return total


def summarise(benchmark: str, run_dir: Path, items: Sequence[WorkItem], entries: Sequence[LedgerEntry],
              before: Mapping[str, LedgerEntry]) -> RunSummary:
    """Counts per group for the selected `items`.

    Args:
        benchmark: The benchmark's name.
        run_dir: The run directory.
        items: The selected tasks.
        entries: Every line of the checkpoint (earlier runs' and this run's).
        before: The last entry per key before this run started.
    """
    last: dict[str, LedgerEntry] = {entry.key: entry for entry in entries}
    summary = RunSummary(benchmark, run_dir)
    scores: dict[str, list[float]] = {}
    run_scores: dict[str, list[float]] = {}
    for item in items:
        group = summary.groups.setdefault(item.group, GroupSummary(item.group))
        group.selected += 1
        entry = last.get(item.key)
        earlier = before.get(item.key)
        if entry is None:
            group.pending += 1
            continue
        this_run = entry is not earlier
        if entry.status == "done":
            if this_run:
                group.done += 1
                group.seconds += entry.seconds
            else:
                group.skipped += 1
            if entry.score is not None:
                scores.setdefault(item.group, []).append(entry.score)
                if this_run:
                    run_scores.setdefault(item.group, []).append(entry.score)
        elif not this_run:
            group.pending += 1
        else:
            group.seconds += entry.seconds
            setattr(group, entry.status, getattr(group, entry.status) + 1)
            target = summary.untested if entry.status == "untested" else summary.errored
            target.append(Unfinished(entry.key, entry.group, entry.reason))
        summary.rows.append(entry.row())
    for name, group in summary.groups.items():
        group.score = _mean(scores.get(name, []))
        group.run_score = _mean(run_scores.get(name, []))
        group.seconds = round(group.seconds, 3)
    _add_up(summary.total, summary.groups.values(), scores, run_scores)
    if any(name.endswith(FAULT_GROUP_SUFFIX) for name in summary.groups):
        for arm, faulted in ((NO_FAULTS, False), (WITH_FAULTS, True)):
            members = [g for name, g in summary.groups.items() if name.endswith(FAULT_GROUP_SUFFIX) == faulted]
            summary.arms[arm] = _add_up(GroupSummary(f"total, {arm}"), members, scores, run_scores)
    summary.robustness = robustness_block(last[item.key].model_dump() for item in items if item.key in last)
    usage = UsageAggregator(usage_records(entries)).summary()
    summary.cost = {"cost_by_role": {role: entry["total"] for role, entry in usage["roles"].items()},
                    "cost_total": usage["total"]}
    return summary


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


TABLE_LEGEND = ("done before = scored by an earlier run of this directory (not run again); done now = scored by this "
                "run; run score = mean over this run's done tasks; score = mean over every done task")
"""The line under the end-of-run table that says what its columns count."""


def format_table(summary: RunSummary) -> str:
    """The end-of-run table: one row per group, then the total (with `--faults`, one total per arm instead of one
    that mixes them), what the columns count, then where things are."""
    header = ("group", "selected", "done before", "done now", "untested", "errored", "pending", "run score", "score")
    rows = [header]
    totals = list(summary.arms.values()) or [summary.total]
    for group in [*summary.groups.values(), *totals]:
        rows.append((group.group, str(group.selected), str(group.skipped), str(group.done), str(group.untested),
                     str(group.errored), str(group.pending), _cell(group.run_score), _cell(group.score)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.append(TABLE_LEGEND)
    lines.append(f"\nrun dir: {summary.run_dir}")
    lines.extend(summary.evaluation.lines)
    lines.extend(robustness_lines(summary.robustness))
    for title, items in (("untested", summary.untested), ("errored", summary.errored)):
        for item in items[:10]:
            lines.append(f"{title}: {item.key}: {item.reason}")
        if len(items) > 10:
            lines.append(f"{title}: … {len(items) - 10} more in summary.json")
    if summary.stopped:
        lines.append(f"stopped: {summary.stopped}")
    if summary.untested or summary.errored or summary.stopped:
        lines.append(f"rerun the untested, errored and pending tasks with: --resume {summary.run_dir}")
    return "\n".join(lines)
