"""The BFCL V4 leaderboard's rows and weights, over the categories a set of runs scored.

The structure is the one `bfcl evaluate` builds its leaderboard from (bfcl-eval 2026.3.23,
`eval_runner_helper.generate_leaderboard_csv`):

| row | how | weight in overall |
|---|---|---|
| non_live | unweighted mean of simple (mean of simple_python, simple_java, simple_javascript), multiple, parallel, parallel_multiple | 10 |
| live | mean of live_simple, live_multiple, live_parallel, live_parallel_multiple, weighted by entries | 10 |
| irrelevance | unweighted mean of irrelevance, live_irrelevance | 10 |
| multi_turn | unweighted mean of base, miss_func, miss_param, long_context | 30 |
| agentic | unweighted mean of web_search (base, no_snippet) and memory (kv, vector, rec_sum) | 40 |
| relevance | live_relevance (reported, not in overall) | 0 |
| format_sensitivity | format_sensitivity (reported apart: not in overall, not counted as missing) | 0 |

Unlike the official table, a category that was not run is never counted as 0%: it is listed as missing, every row
that needs it has no value, and the overall has no value until every category it weighs was scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.bfcl.categories import FORMAT_SENSITIVITY_CATEGORY

OVERALL_WEIGHTS: dict[str, int] = {"non_live": 10, "live": 10, "irrelevance": 10, "multi_turn": 30, "agentic": 40}
"""The leaderboard's overall weights per row (bfcl-eval 2026.3.23)."""


@dataclass(frozen=True)
class Scored:
    """One category's figures."""

    accuracy: float
    total: int
    """Entries in the category (the live row weighs by it)."""


@dataclass(frozen=True)
class Row:
    """One leaderboard row (or sub-row)."""

    name: str
    how: str
    """`mean` (unweighted), `weighted` (by entries) or a category name."""
    parts: tuple[Row | str, ...]
    """Sub-rows or category names."""

    def categories(self) -> tuple[str, ...]:
        """Every category under this row."""
        out: list[str] = []
        for part in self.parts:
            out += [part] if isinstance(part, str) else list(part.categories())
        return tuple(out)


SIMPLE = Row("simple", "mean", ("simple_python", "simple_java", "simple_javascript"))
WEB_SEARCH = Row("web_search", "mean", ("web_search_base", "web_search_no_snippet"))
MEMORY = Row("memory", "mean", ("memory_kv", "memory_vector", "memory_rec_sum"))
ROWS: tuple[Row, ...] = (
    Row("non_live", "mean", (SIMPLE, "multiple", "parallel", "parallel_multiple")),
    Row("live", "weighted", ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")),
    Row("irrelevance", "mean", ("irrelevance", "live_irrelevance")),
    Row("multi_turn", "mean", ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                               "multi_turn_long_context")),
    Row("agentic", "mean", (WEB_SEARCH, MEMORY)),
    Row("relevance", "mean", ("live_relevance",)),
)
LEADERBOARD_CATEGORIES: tuple[str, ...] = tuple(c for row in ROWS for c in row.categories())
"""Every category the leaderboard scores (format_sensitivity is reported apart, as the official runner does)."""
FORMAT_SENSITIVITY_NOTE = (
    "format_sensitivity is reported apart, never weighed: the official runner runs its 26 prompt formats for "
    "prompting models only and skips it for function-calling ones; Gecko's agents call tools, so it is not run")


@dataclass(frozen=True)
class RowValue:
    """A row's value: None when a category under it was not scored."""

    name: str
    accuracy: float | None
    total: int
    missing: tuple[str, ...]
    weight: int


@dataclass(frozen=True)
class Leaderboard:
    """The V4 rows, the overall, and what is missing."""

    rows: tuple[RowValue, ...]
    overall: float | None
    """None unless every category the overall weighs was scored."""
    missing: tuple[str, ...]


def _value(row: Row | str, scores: Mapping[str, Scored]) -> tuple[float | None, int]:
    if isinstance(row, str):
        score = scores.get(row)
        return (None, 0) if score is None else (score.accuracy, score.total)
    values = [_value(part, scores) for part in row.parts]
    total = sum(count for _, count in values)
    if any(accuracy is None for accuracy, _ in values):
        return None, total
    accuracies = [accuracy for accuracy, _ in values if accuracy is not None]
    if row.how == "weighted":
        return (sum(a * c for a, c in zip(accuracies, (c for _, c in values), strict=True)) / total
                if total else 0.0), total
    return sum(accuracies) / len(accuracies), total


def leaderboard(scores: Mapping[str, Scored]) -> Leaderboard:
    """The V4 rows and overall over `scores` (category → figures); missing categories never count as 0."""
    rows = []
    for row in ROWS:
        accuracy, total = _value(row, scores)
        rows.append(RowValue(row.name, accuracy, total, tuple(c for c in row.categories() if c not in scores),
                             OVERALL_WEIGHTS.get(row.name, 0)))
    apart = scores.get(FORMAT_SENSITIVITY_CATEGORY)
    rows.append(RowValue(FORMAT_SENSITIVITY_CATEGORY, None if apart is None else apart.accuracy,
                         0 if apart is None else apart.total, () if apart else (FORMAT_SENSITIVITY_CATEGORY,), 0))
    weighted = [r for r in rows if r.weight]
    overall = None
    if all(r.accuracy is not None for r in weighted):
        overall = sum(r.weight * (r.accuracy or 0.0) for r in weighted) / sum(r.weight for r in weighted)
    return Leaderboard(tuple(rows), overall, tuple(c for c in LEADERBOARD_CATEGORIES if c not in scores))


def sweep_lines(board: Leaderboard, untested: Mapping[str, tuple[int, str]], run_dir: Path) -> tuple[str, ...]:
    """What a sweep prints under its run table: the leaderboard table, the untested categories with why (they have
    no value, never 0%), the format_sensitivity note, and how to combine runs."""
    lines = ["BFCL V4 leaderboard (rows with a category not scored have no value, never 0%):",
             format_leaderboard(board)]
    if untested:
        lines.append("untested (no value, never 0%): " + "; ".join(
            f"{category} {count} task(s): {reason}" for category, (count, reason) in sorted(untested.items())))
    lines += [FORMAT_SENSITIVITY_NOTE, f"combine runs: gecko score --overall {run_dir} RUN_DIR…"]
    return tuple(lines)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.2f}%"


def format_leaderboard(board: Leaderboard, official: Mapping[str, float | None] | None = None) -> str:
    """The leaderboard table: one line per row (weight, value, missing categories), then the overall; with
    `official`, a column of the official figures (row name or `overall` → value)."""
    header = ["row", "weight", "ours"] + (["official"] if official is not None else []) + ["missing"]
    lines: list[Sequence[str]] = [header]
    for row in board.rows:
        cells = [row.name, str(row.weight) if row.weight else "-", _percent(row.accuracy)]
        if official is not None:
            cells.append(_percent(official.get(row.name)))
        apart = row.name == FORMAT_SENSITIVITY_CATEGORY and row.missing
        lines.append([*cells, "not run (reported apart)" if apart else ", ".join(row.missing) or "-"])
    overall = ["overall", "100", _percent(board.overall)]
    if official is not None:
        overall.append(_percent(official.get("overall")))
    lines.append([*overall, f"{len(board.missing)} categories missing" if board.missing else "-"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(text)
