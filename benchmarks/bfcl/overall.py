"""The BFCL V4 overall score of one model over several run directories (`gecko score --overall [--official]`).

```
RUN_DIR…  →  result/<model>/<group>/BFCL_v4_<category>_result.json (one run per category, one model)
          →  our checkers per category  →  leaderboard.py rows, weights, overall (missing categories: no value)
          →  with --official: the files copied into one result dir, `bfcl evaluate` on every category present;
             its leaderboard CSVs (data_overall.csv …) give the official row values, compared where complete
```

The official CSVs count a category that was not run as 0% in their overall (and in some rows); those values are
never shown: a row or the overall is compared only when every category under it was scored.
"""

from __future__ import annotations

import csv
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.bfcl.categories import (
    MEMORY_CATEGORIES,
    category_dir,
    category_of_result_file,
    result_file_name,
)
from benchmarks.bfcl.export import ResultRecord, read_results
from benchmarks.bfcl.leaderboard import (
    LEADERBOARD_CATEGORIES,
    Leaderboard,
    Scored,
    format_leaderboard,
    leaderboard,
)
from benchmarks.bfcl.loader import load_category
from benchmarks.bfcl.official import OFFICIAL_HANDLER, evaluate_official
from benchmarks.bfcl.scoring import score_category

RESULT_DIR = "result"
OFFICIAL_COLUMNS: dict[str, tuple[str, str]] = {
    "non_live": ("data_non_live.csv", "Non-Live Overall Acc"),
    "live": ("data_live.csv", "Live Overall Acc"),
    "irrelevance": ("data_overall.csv", "Irrelevance Detection"),
    "multi_turn": ("data_multi_turn.csv", "Multi Turn Overall Acc"),
    "agentic": ("data_agentic.csv", "Agentic Overall Acc"),
    "relevance": ("data_overall.csv", "Relevance Detection"),
    "overall": ("data_overall.csv", "Overall Acc"),
}
"""Leaderboard row → the official CSV and column holding its value."""


class OverallError(ValueError):
    """The run directories cannot be combined: no result file, two models, or a category run twice."""


@dataclass(frozen=True)
class ResultSet:
    """The result files of one model, one per category, gathered from run directories."""

    model_dir: str
    files: Mapping[str, Path]
    """Category → result file."""


@dataclass(frozen=True)
class OverallReport:
    """Our leaderboard, the official values (None without `--official`), and whether they agree."""

    board: Leaderboard
    official: Mapping[str, float | None] | None
    partial: tuple[str, ...]
    """Categories scored on a subset of their tasks."""
    disagreements: tuple[str, ...]
    command: str | None = None

    def format(self) -> str:
        """The table, what is missing or partial, and the official verdict."""
        lines = [format_leaderboard(self.board, self.official)]
        if self.board.missing:
            lines.append("not run (no value, never counted as 0%): " + ", ".join(self.board.missing))
        if self.partial:
            lines.append("scored on part of their tasks: " + ", ".join(self.partial))
        if self.command:
            lines.append(f"official command: {self.command}")
        if self.official is not None:
            lines.append("the official leaderboard code agrees with our rows" if not self.disagreements
                         else "the official leaderboard code does NOT agree: " + ", ".join(self.disagreements))
        return "\n".join(lines)


def gather(run_dirs: Sequence[Path]) -> ResultSet:
    """The result files of the run directories (`<run>/result/<model>/<group>/…`).

    Raises:
        OverallError: No result file, results of two models, or a category in two run directories.
    """
    models: set[str] = set()
    files: dict[str, Path] = {}
    for run_dir in run_dirs:
        root = run_dir / RESULT_DIR
        for path in sorted(root.glob("*/**/*_result.json")):
            category = category_of_result_file(path.name)
            if category not in LEADERBOARD_CATEGORIES:  # memory's prerequisites, and names we do not know
                continue
            if category in files:
                raise OverallError(f"{category} was run in two directories ({files[category]} and {path}); "
                                   "give each category once")
            models.add(path.relative_to(root).parts[0])
            files[category] = path
    if not files:
        raise OverallError("no BFCL result file under " + ", ".join(str(p / RESULT_DIR) for p in run_dirs))
    if len(models) > 1:
        raise OverallError(f"the run directories hold results of several models ({', '.join(sorted(models))}); "
                           "an overall score is of one model")
    return ResultSet(models.pop(), files)


def our_scores(results: ResultSet) -> tuple[dict[str, Scored], tuple[str, ...]]:
    """Our checkers' accuracy per category (entries scored as weights), and the partially scored categories."""
    scores: dict[str, Scored] = {}
    partial = []
    for category, path in results.files.items():
        records = read_results(path)
        if category in MEMORY_CATEGORIES:
            accuracy, total, size = _memory_score(category, records)
        else:
            score = score_category(category, records, partial=True, tasks=load_category(category))
            accuracy, total, size = score.accuracy, score.total, score.dataset_size
        scores[category] = Scored(accuracy, total)
        if total < size:
            partial.append(category)
    return scores, tuple(partial)


def _memory_score(category: str, records: Sequence[ResultRecord]) -> tuple[float, int, int]:
    """A memory category's accuracy, entries scored and size (`memory.score_memory`, the official agentic check).

    Raises:
        OverallError: A record of a question the category does not have.
    """
    from benchmarks.bfcl.memory import (  # it imports bfcl_eval.utils (see sweep.py)
        load_memory_tasks,
        score_memory,
    )

    tasks = {task.id: task for task in load_memory_tasks(category)}
    unknown = [record.id for record in records if record.id not in tasks]
    if unknown:
        raise OverallError(f"{category}: {len(unknown)} ids not in the category, e.g. {unknown[0]}")
    valid = [score_memory(tasks[record.id], record.result).valid for record in records]
    return (sum(valid) / len(valid) if valid else 0.0), len(valid), len(tasks)


def _read_percent(text: str) -> float | None:
    text = text.strip()
    return float(text.rstrip("%")) / 100 if text.endswith("%") else None


def read_official_rows(score_dir: Path) -> dict[str, float | None]:
    """The official leaderboard CSVs' value per row (`OFFICIAL_COLUMNS`; None where the CSV says N/A)."""
    out: dict[str, float | None] = {}
    for row, (file_name, column) in OFFICIAL_COLUMNS.items():
        with (score_dir / file_name).open(encoding="utf-8") as handle:
            record = next(csv.DictReader(handle))
        out[row] = _read_percent(record[column])
    return out


def _complete(board: Leaderboard) -> set[str]:
    rows = {row.name for row in board.rows if not row.missing and row.name in OFFICIAL_COLUMNS}
    return rows | ({"overall"} if board.overall is not None else set())


def official_rows(results: ResultSet, score_dir: Path, *, partial: bool) -> tuple[dict[str, float | None], str]:
    """`bfcl evaluate` on every category of `results` (copied into one result dir) and its leaderboard rows.

    Raises:
        RuntimeError, OSError: see `official.evaluate_official`.
    """
    with tempfile.TemporaryDirectory(prefix="bfcl-overall-") as scratch:
        merged = Path(scratch) / RESULT_DIR
        for category, path in results.files.items():
            target = merged / results.model_dir / category_dir(category) / result_file_name(category)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        _, command = evaluate_official(merged, results.model_dir, sorted(results.files), score_dir, partial=partial)
    return read_official_rows(score_dir), command


def overall_report(run_dirs: Sequence[Path], *, official_score_dir: Path | None = None) -> OverallReport:
    """The V4 leaderboard of the run directories' results; with `official_score_dir`, the official values beside
    ours (only rows whose categories were all scored are shown and compared).

    Raises:
        OverallError: see `gather`.
        RuntimeError, OSError: the official CLI failed.
    """
    results = gather(run_dirs)
    scores, partial = our_scores(results)
    board = leaderboard(scores)
    if official_score_dir is None:
        return OverallReport(board, None, partial, ())
    raw, command = official_rows(results, official_score_dir, partial=bool(partial))
    complete = _complete(board)
    official = {name: (value if name in complete else None) for name, value in raw.items()}
    ours = {row.name: row.accuracy for row in board.rows} | {"overall": board.overall}
    disagreements = tuple(name for name in complete
                          if official.get(name) is None or round((ours[name] or 0.0) * 100, 2)
                          != round((official[name] or 0.0) * 100, 2))
    return OverallReport(board, official, partial, tuple(sorted(disagreements)),
                         f"{command}  (handler {OFFICIAL_HANDLER})")

