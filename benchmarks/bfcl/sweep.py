"""`gecko bfcl`: one category, a leaderboard group, or the leaderboard's `all`, in one run directory.

```
--category all | --group G | --category C  →  SweepRunConfig (any V4 category this package runs)
   only single-turn categories   →  BfclSingleTurn (as before)
   otherwise                     →  BfclSweep: one run, one checkpoint, one result tree, one leaderboard table
        single-turn tasks   →  BfclSingleTurn's path on the --gecko-url Gecko (no state model)
        multi-turn, agentic →  BfclMultiTurn's path on a stateful Gecko: --stateful-gecko-url, `auto` (default) starts
                               one on the multi-turn toolkits with the rules state model; with no single-turn
                               category in the run, --gecko-url is that Gecko
```

The stateful part keeps its runner's defaults for the planner's steps (20, the official per-turn limit) and the
per-turn checklist (on); the other flags are the run's. The leaderboard's `all` has every V4 scoring category this
package runs; format_sensitivity is reported apart (see `leaderboard.FORMAT_SENSITIVITY_NOTE`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from benchmarks.bfcl.benchmark import (
    BfclMultiTurn,
    BfclSingleTurn,
    _Bfcl,
    multi_turn_group,
    single_turn_group,
)
from benchmarks.bfcl.categories import (
    AGENTIC_CATEGORIES,
    LEADERBOARD_GROUPS,
    MULTI_TURN_CATEGORIES,
    SINGLE_TURN_CATEGORIES,
)
from benchmarks.bfcl.loader import SingleTurnTask
from benchmarks.bfcl.run_config import BfclRunConfig, MultiTurnRunConfig
from benchmarks.bfcl.scoring import EntryScore, score_entry
from benchmarks.runner import LocalGecko, RunContext, RunOptions, TaskOutcome, WorkItem
from benchmarks.runner.options import AUTO_GECKO

SWEEP_CATEGORIES: tuple[str, ...] = SINGLE_TURN_CATEGORIES + MULTI_TURN_CATEGORIES + AGENTIC_CATEGORIES
"""The leaderboard's `all`, as far as this package runs it."""
_STATEFUL_DEFAULTS = frozenset({"max_steps", "generate_checklist"})
"""Settings the stateful part takes from `MultiTurnRunConfig`'s defaults, not from the run's flags."""


class SweepRunConfig(BfclRunConfig):
    """A `gecko bfcl` run: any category of `SWEEP_CATEGORIES`."""

    CATEGORIES: ClassVar[tuple[str, ...]] = SWEEP_CATEGORIES


def sweep_categories(name: str) -> tuple[str, ...]:
    """The categories named by `gecko bfcl --category`: `all` (the leaderboard's), or one category.

    Raises:
        ValueError: Not a category of the leaderboard that this package runs.
    """
    if name == "all":
        return SWEEP_CATEGORIES
    if name not in SWEEP_CATEGORIES:
        raise ValueError(f"{name!r} is not a BFCL category Gecko runs; choose from {', '.join(SWEEP_CATEGORIES)} "
                         "or 'all'")
    return (name,)


def sweep_group(group: str) -> tuple[str, ...]:
    """The categories of one leaderboard group (`--group non_live|live|multi_turn|agentic`).

    Raises:
        ValueError: Not a leaderboard group.
    """
    if group in ("non_live", "live"):
        return single_turn_group(group)
    if group in ("multi_turn", "agentic"):
        return multi_turn_group(group)
    raise ValueError(f"unknown group {group!r}; choose from {', '.join(LEADERBOARD_GROUPS)}")


class Bfcl(BfclSingleTurn):
    """The `gecko bfcl` command: a single-turn run, or a sweep (`BfclSweep`) when other categories are selected."""

    config_type = SweepRunConfig
    categories_of = staticmethod(sweep_categories)
    group_categories = staticmethod(sweep_group)
    category_help = (f"one of {', '.join(SWEEP_CATEGORIES)}, or 'all': every V4 leaderboard category Gecko runs "
                     "(one result file per category, one leaderboard table)")

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """The BFCL flags, and the stateful Gecko of a sweep."""
        super().add_arguments(parser)
        parser.add_argument("--stateful-gecko-url", default=AUTO_GECKO,
                            help="a sweep's Gecko for multi-turn and agentic tasks (state model on): its URL, or "
                                 f"'{AUTO_GECKO}' (default) to start one on the multi-turn toolkits (rules)")

    @classmethod
    def build(cls, config: BfclRunConfig, options: RunOptions, args: argparse.Namespace | None = None) -> _Bfcl:
        """A `BfclSingleTurn` when every category is single-turn, else a `BfclSweep`."""
        if all(category in SINGLE_TURN_CATEGORIES for category in config.categories):
            return BfclSingleTurn(BfclRunConfig.model_validate(config.model_dump()), options)
        url = getattr(args, "stateful_gecko_url", None) or AUTO_GECKO
        return BfclSweep(SweepRunConfig.model_validate(config.model_dump()), options, stateful_gecko_url=url)


class BfclSweep(Bfcl):
    """Several kinds of BFCL category in one run: each task goes the way of its own runner (`BfclSingleTurn`,
    `BfclMultiTurn`), each part on its own Gecko; one checkpoint, one result tree, one leaderboard table."""

    def __init__(self, config: BfclRunConfig, options: RunOptions, *, stateful_gecko_url: str = AUTO_GECKO) -> None:
        super().__init__(config, options)
        self.stateful_gecko_url = stateful_gecko_url
        common = config.model_dump(exclude={"categories"})
        single = tuple(c for c in config.categories if c in SINGLE_TURN_CATEGORIES)
        stateful = tuple(c for c in config.categories if c not in SINGLE_TURN_CATEGORIES)
        self.single = BfclSingleTurn(BfclRunConfig(categories=single, **common), options) if single else None
        kept = {key: value for key, value in common.items() if key not in _STATEFUL_DEFAULTS}
        self.stateful = BfclMultiTurn(MultiTurnRunConfig(categories=stateful, **kept), options) if stateful else None

    def _part(self, task: Any) -> _Bfcl:
        part = self.single if isinstance(task, SingleTurnTask) else self.stateful
        assert part is not None, "select() picks tasks of the configured categories only"
        return part

    def local_gecko(self) -> LocalGecko:
        """The Gecko that `--gecko-url auto` starts: the single-turn one, or the stateful one without single-turn
        categories."""
        local = self.single.local_gecko() if self.single is not None else self._part(None).local_gecko()
        assert local is not None, "both parts start their own Gecko"
        return local

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> dict[str, Any]:
        """Each part's preflight on its own tasks and Gecko (the stateful part's Gecko: `--stateful-gecko-url` when
        the run also has single-turn tasks, started here when `auto` and stopped with the run)."""
        single = [item for item in items if isinstance(item.task, SingleTurnTask)]
        stateful = [item for item in items if not isinstance(item.task, SingleTurnTask)]
        environment: dict[str, Any] = {}
        if single and self.single is not None:
            environment["single_turn"] = await self.single.preflight(single, context)
        if stateful and self.stateful is not None:
            own = context
            if self.single is not None:
                llm = None if self.settings.model.startswith("scripted-") else context.llm()
                own = RunContext(context.run_name, replace(self.options, gecko_url=self.stateful_gecko_url), llm=llm)
                context.adopt(own)
                own.start_local_gecko(self.stateful.local_gecko())
            environment["stateful"] = {**await self.stateful.preflight(stateful, own), "gecko_url": own.gecko_url,
                                       "settings": self.stateful.config()}
        return environment

    async def run(self, item: WorkItem) -> TaskOutcome:
        """The task, the way of its own runner."""
        return await self._part(item.task).run(item)

    def score_task(self, task: Any, result: Any) -> EntryScore:
        return score_entry(task, result)
