"""A judge panel: several judges decide every checklist item, and a vote combines them. Fails closed.

```
JudgePanel.judge(data) ─► every judge at once ─► verdicts; a judge that fails is excluded and reported
                        ─► per item, over the judges that answered:
                             majority   more than half say X → X; no majority → unknown
                             unanimous  all say success → success; else failed if one says failed; else unknown
                             any        one says success → success; else failed if one says failed; else unknown
                        ─► JudgeResult(items, engine="a,b,c", panel={vote, judges, excluded, agreement})
```

No judge answering is a `JudgeFailure` (never a success). Agreement is measured over the judges that answered:
pairwise (the share of judge pairs, over items, that gave an item the same status) and Fleiss' kappa (chance-
corrected; None when it is undefined: fewer than two judges, or every rating in one category). The checklist
is the first judge's (the next one's if it fails).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from gecko.pipeline.stages import (
    ChecklistItem,
    ItemStatus,
    ItemVerdict,
    JudgeFailure,
    JudgeInput,
    JudgeResult,
    TaskJudge,
)

Vote = Literal["majority", "unanimous", "any"]
STATUSES: tuple[ItemStatus, ...] = ("success", "failed", "unknown")


def pairwise_agreement(ratings: Sequence[Sequence[str]]) -> float | None:
    """Share of (item, judge pair) with the same status; `ratings[i]` holds item i's status from every judge."""
    pairs = [a == b for item in ratings for a, b in itertools.combinations(item, 2)]
    return round(sum(pairs) / len(pairs), 6) if pairs else None


def fleiss_kappa(ratings: Sequence[Sequence[str]], categories: Sequence[str] = STATUSES) -> float | None:
    """Fleiss' kappa of items rated by the same number (≥ 2) of judges; None when undefined."""
    if not ratings or len(ratings[0]) < 2 or any(len(item) != len(ratings[0]) for item in ratings):
        return None
    raters, items = len(ratings[0]), len(ratings)
    counts = [Counter(item) for item in ratings]
    observed = sum((sum(c[k] ** 2 for k in categories) - raters) / (raters * (raters - 1)) for c in counts) / items
    shares = [sum(c[k] for c in counts) / (items * raters) for k in categories]
    expected = sum(share ** 2 for share in shares)
    if expected >= 1.0:
        return None
    return round((observed - expected) / (1.0 - expected), 6)


def combine(statuses: Sequence[ItemStatus], vote: Vote) -> ItemStatus:
    """One item's status from the judges' statuses under `vote` (see the module docstring)."""
    if vote == "majority":
        status, count = Counter(statuses).most_common(1)[0]
        return status if 2 * count > len(statuses) else "unknown"
    if vote == "unanimous" and all(s == "success" for s in statuses):
        return "success"
    if vote == "any" and "success" in statuses:
        return "success"
    return "failed" if "failed" in statuses else "unknown"


class JudgePanel:
    """`TaskJudge` over several judges (one per model alias).

    Args:
        judges: the panel (at least two).
        vote: how their verdicts combine.
    """

    def __init__(self, judges: Sequence[TaskJudge], vote: Vote = "majority") -> None:
        if len(judges) < 2:
            raise ValueError("a judge panel needs at least two judges")
        self.judges = list(judges)
        self.vote: Vote = vote
        self.engine = ",".join(judge.engine for judge in self.judges)

    async def checklist(self, task: str, previous_tasks: list[str], tools: list[dict[str, Any]],
                        usage: list[dict[str, Any]]) -> list[ChecklistItem]:
        """The first judge's checklist (the next judge's if it fails).

        Raises:
            JudgeFailure: no judge produced one.
        """
        errors = []
        for judge in self.judges:
            try:
                return await judge.checklist(task, previous_tasks, tools, usage)
            except JudgeFailure as exc:
                errors.append(f"{judge.engine}: {exc}")
        raise JudgeFailure("no judge of the panel produced a checklist: " + "; ".join(errors))

    async def judge(self, data: JudgeInput) -> JudgeResult:
        """Every judge's verdict, combined by the vote.

        Raises:
            JudgeFailure: no judge of the panel produced a verdict.
        """
        outcomes = await asyncio.gather(*(judge.judge(data) for judge in self.judges), return_exceptions=True)
        answered: list[tuple[TaskJudge, JudgeResult]] = []
        excluded: list[dict[str, str]] = []
        for judge, outcome in zip(self.judges, outcomes, strict=True):
            if isinstance(outcome, JudgeResult):
                answered.append((judge, outcome))
            elif isinstance(outcome, JudgeFailure):
                excluded.append({"model": judge.engine, "error": str(outcome)})
            else:
                raise outcome  # a bug, not a judge's failure: let it surface
        if not answered:
            raise JudgeFailure("every judge of the panel failed: "
                               + "; ".join(f"{e['model']}: {e['error']}" for e in excluded))
        by_judge = [{item.id: item for item in result.items} for _, result in answered]
        items, ratings = [], []
        for item in data.checklist:
            verdicts = [verdicts_of[item.id] for verdicts_of in by_judge]
            statuses = [v.status for v in verdicts]
            status = combine(statuses, self.vote)
            reason = next((v.reasoning for v in verdicts if v.status == status and v.reasoning), "")
            summary = f"{statuses.count(status)} of {len(statuses)} judges: {status} ({self.vote})"
            items.append(ItemVerdict(item.id, item.description, status, f"{summary}. {reason}".strip()))
            ratings.append(statuses)
        panel = {
            "vote": self.vote,
            "judges": [{"model": judge.engine, "success": result.success,
                        "items": [{"id": v.id, "status": v.status, "reasoning": v.reasoning} for v in result.items]}
                       for judge, result in answered],
            "excluded": excluded,
            "agreement": {"judges": len(answered), "pairwise": pairwise_agreement(ratings),
                          "fleiss_kappa": fleiss_kappa(ratings)},
        }
        return JudgeResult(items=items, engine=self.engine, panel=panel)
