"""Group averages, the overall score, and the printed table.

Weighting (chosen to match how `bfcl evaluate` builds its leaderboard groups, see research/bfcl_eval.md §5):

- non-live: unweighted mean of the non-live categories scored (simple_python, multiple, parallel,
  parallel_multiple, irrelevance);
- live: mean of the live categories scored (live_simple, live_multiple, live_parallel, live_parallel_multiple,
  live_irrelevance, live_relevance), weighted by the number of entries scored in each, as the official live
  summary is;
- multi-turn: unweighted mean of the multi-turn categories scored;
- overall (the paper's definition): unweighted mean of those three group averages. It is reported only when
  all three groups have at least one category scored; otherwise it is None ("n/a" in the table).

Unlike the official summaries, the irrelevance categories are inside their group averages: they are part of
the seven single-turn categories the paper runs, and the official overall weights them separately only
because it also has relevance and agentic columns. The leaderboard's own V4 rows and weights are in
`leaderboard.py` (printed after a sweep, and by `gecko score --overall`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks.bfcl.categories import LIVE_CATEGORIES, MULTI_TURN_CATEGORIES, NON_LIVE_CATEGORIES, Group
from benchmarks.bfcl.scoring import CategoryScore

WEIGHTING_NOTE = (
    "non_live: unweighted mean of its categories; live: mean weighted by entries scored; "
    "multi_turn: unweighted mean; overall: unweighted mean of the three groups (only when all three are present)"
)


@dataclass(frozen=True)
class GroupScore:
    """Average accuracy of one group over the categories that were scored."""

    group: Group
    accuracy: float | None
    """None when no category of the group was scored."""
    categories: tuple[str, ...]
    weighted: bool
    """True when categories are weighted by entries scored (the live group)."""


@dataclass(frozen=True)
class ModelSummary:
    """All scores of one model."""

    model: str
    categories: Mapping[str, CategoryScore]
    groups: Mapping[Group, GroupScore]
    overall: float | None

    @property
    def partial(self) -> bool:
        """Whether any category was scored on a subset of its tasks."""
        return any(score.partial for score in self.categories.values())


def _group(
    group: Group, members: Sequence[str], scores: Mapping[str, CategoryScore], weighted: bool
) -> GroupScore:
    present = [scores[name] for name in members if name in scores and scores[name].total]
    if not present:
        return GroupScore(group, None, (), weighted)
    if weighted:
        accuracy = sum(s.correct for s in present) / sum(s.total for s in present)
    else:
        accuracy = sum(s.accuracy for s in present) / len(present)
    return GroupScore(group, accuracy, tuple(s.category for s in present), weighted)


def summarise(model: str, scores: Mapping[str, CategoryScore]) -> ModelSummary:
    """Group averages and overall score of one model's category scores."""
    groups: dict[Group, GroupScore] = {
        "non_live": _group("non_live", NON_LIVE_CATEGORIES, scores, weighted=False),
        "live": _group("live", LIVE_CATEGORIES, scores, weighted=True),
        "multi_turn": _group("multi_turn", MULTI_TURN_CATEGORIES, scores, weighted=False),
    }
    values = [g.accuracy for g in groups.values()]
    overall = (
        None if any(v is None for v in values) else sum(v for v in values if v is not None) / len(values)
    )
    return ModelSummary(model=model, categories=dict(scores), groups=groups, overall=overall)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.2f}%"


def format_table(summaries: Sequence[ModelSummary]) -> str:
    """A plain-text table: one row per category, then the group averages and the overall score."""
    rows: list[tuple[str, str, str, str]] = [("model", "category", "correct/total", "accuracy")]
    for summary in summaries:
        for name, score in summary.categories.items():
            count = f"{score.correct}/{score.total}" + (
                f" (of {score.dataset_size})" if score.partial else ""
            )
            rows.append((summary.model, name, count, _percent(score.accuracy)))
        for group in summary.groups.values():
            how = "weighted" if group.weighted else "mean"
            rows.append(
                (
                    summary.model,
                    f"[{group.group} {how}]",
                    ", ".join(group.categories),
                    _percent(group.accuracy),
                )
            )
        rows.append((summary.model, "[overall]", "mean of 3 groups", _percent(summary.overall)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
