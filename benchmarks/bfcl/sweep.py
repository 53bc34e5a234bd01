"""`gecko bfcl`: one category, a leaderboard group, or the leaderboard's `all`, in one run directory.

```
--category all | --group G | --category C  →  SweepRunConfig (any V4 scoring category this package runs)
   only single-turn categories   →  BfclSingleTurn (as before)
   otherwise                     →  BfclSweep: one run, one checkpoint, one result tree, one leaderboard table; parts:
        single-turn tasks       →  BfclSingleTurn's path, on a Gecko without a state model
        multi-turn, web_search  →  BfclMultiTurn's path, on a stateful Gecko (the multi-turn toolkits, rules)
        memory                  →  BfclMemory's path, on a Gecko on the memory toolkits
   the first part present uses --gecko-url; the others --stateful-gecko-url / --memory-gecko-url (`auto`, the default,
   starts one for the run and stops it after)
```

The multi-turn and memory parts keep their runners' defaults for the planner's steps (20, the official per-turn
limit) and the per-turn checklist; the other flags are the run's. A part that cannot run the model (memory has no
noisy script) is listed as not run. format_sensitivity is reported apart (see `leaderboard.FORMAT_SENSITIVITY_NOTE`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.bfcl.agents import is_scripted
from benchmarks.bfcl.benchmark import (
    BfclMultiTurn,
    BfclSingleTurn,
    _Bfcl,
    multi_turn_group,
    single_turn_group,
    with_leaderboard,
)
from benchmarks.bfcl.categories import (
    AGENTIC_CATEGORIES,
    LEADERBOARD_GROUPS,
    MEMORY_CATEGORIES,
    MULTI_TURN_CATEGORIES,
    SINGLE_TURN_CATEGORIES,
)
from benchmarks.bfcl.loader import SingleTurnTask
from benchmarks.bfcl.run_config import BfclRunConfig, MultiTurnRunConfig
from benchmarks.bfcl.scoring import EntryScore, score_entry
from benchmarks.runner import (
    Evaluation,
    LedgerEntry,
    LocalGecko,
    OfficialCheck,
    RunContext,
    RunOptions,
    TaskOutcome,
    WorkItem,
)
from benchmarks.runner.options import AUTO_GECKO

SWEEP_AGENTIC: tuple[str, ...] = AGENTIC_CATEGORIES + tuple(c for c in MEMORY_CATEGORIES if c not in AGENTIC_CATEGORIES)
"""The leaderboard's agentic group: web_search (the stateful part) and memory (its own part)."""
SWEEP_CATEGORIES: tuple[str, ...] = SINGLE_TURN_CATEGORIES + MULTI_TURN_CATEGORIES + SWEEP_AGENTIC
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
    if group == "agentic":
        return SWEEP_AGENTIC
    if group == "multi_turn":
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
        """The BFCL flags, and the Geckos of a sweep's other parts."""
        super().add_arguments(parser)
        for part, what in (("stateful", "multi-turn and web_search tasks (state model on; the multi-turn toolkits)"),
                           ("memory", "memory tasks (state model on; the memory toolkits)")):
            parser.add_argument(f"--{part}-gecko-url", default=AUTO_GECKO,
                                help=f"a sweep's Gecko for {what}: its URL, or '{AUTO_GECKO}' (default) to start one; "
                                     "--gecko-url is the first part's (single-turn, else stateful, else memory)")

    @classmethod
    def build(cls, config: BfclRunConfig, options: RunOptions, args: argparse.Namespace | None = None) -> _Bfcl:
        """A `BfclSingleTurn` when every category is single-turn, else a `BfclSweep`."""
        if all(category in SINGLE_TURN_CATEGORIES for category in config.categories):
            return BfclSingleTurn(BfclRunConfig.model_validate(config.model_dump()), options)
        urls = {part: getattr(args, f"{part}_gecko_url", None) or AUTO_GECKO for part in ("stateful", "memory")}
        return BfclSweep(SweepRunConfig.model_validate(config.model_dump()), options, gecko_urls=urls)


def _ids_of(ids: tuple[str, ...] | None, categories: Sequence[str]) -> tuple[str, ...] | None:
    """The ids that belong to `categories` (all of them when one category is given: short ids)."""
    if ids is None or len(categories) == 1:
        return ids
    return tuple(i for i in ids if any(i.startswith(f"{category}_") for category in categories))


class BfclSweep(Bfcl):
    """Several kinds of BFCL category in one run: each task goes the way of its own runner (`BfclSingleTurn`,
    `BfclMultiTurn`, `BfclMemory`), each part on its own Gecko; one checkpoint, one result tree, one leaderboard.

    Args:
        config: The run's settings.
        options: How it is carried out.
        gecko_urls: The Gecko of the `stateful` and `memory` parts when another part comes first (`auto`: started
            for the run).
    """

    def __init__(self, config: BfclRunConfig, options: RunOptions, *,
                 gecko_urls: Mapping[str, str] | None = None) -> None:
        super().__init__(config, options)
        self.gecko_urls = dict(gecko_urls or {})
        self.not_run: dict[str, str] = {}
        """Category → why the sweep leaves it out (listed under the table)."""
        common = config.model_dump(exclude={"categories", "ids"})
        kept = {key: value for key, value in common.items() if key not in _STATEFUL_DEFAULTS}
        single = tuple(c for c in config.categories if c in SINGLE_TURN_CATEGORIES)
        memory = tuple(c for c in config.categories if c in MEMORY_CATEGORIES)
        stateful = tuple(c for c in config.categories if c not in single and c not in memory)
        self.single = self._make(BfclSingleTurn, BfclRunConfig, single, config.ids, common)
        self.stateful = self._make(BfclMultiTurn, MultiTurnRunConfig, stateful, config.ids, kept)
        self.memory: _Bfcl | None = None
        if memory:
            # imported here: the memory code imports bfcl_eval.utils, which makes directories in site-packages
            from benchmarks.bfcl.memory_benchmark import BfclMemory, MemoryRunConfig

            try:
                self.memory = self._make(BfclMemory, MemoryRunConfig, memory, config.ids, kept)
            except ValueError as exc:  # a scripted agent without a memory script
                self.not_run |= dict.fromkeys(memory, str(exc))

    def _make(self, kind: type[_Bfcl], config_type: type[BfclRunConfig], categories: tuple[str, ...],
              ids: tuple[str, ...] | None, settings: Mapping[str, Any]) -> Any:
        picked = _ids_of(ids, categories)
        if not categories or (ids is not None and not picked):
            return None
        return kind(config_type(categories=categories, ids=picked, **settings), self.options)

    def parts(self) -> list[_Bfcl]:
        """The parts present, in order: single-turn, stateful (multi-turn, web_search), memory."""
        return [part for part in (self.single, self.stateful, self.memory) if part is not None]

    def _part(self, task: Any) -> _Bfcl:
        part = (self.single if isinstance(task, SingleTurnTask) else
                self.memory if task.category in MEMORY_CATEGORIES else self.stateful)
        assert part is not None, "select() picks tasks of the parts present only"
        return part

    def _url_of(self, part: _Bfcl) -> str:
        return self.gecko_urls.get("memory" if part is self.memory else "stateful", AUTO_GECKO)

    def select(self) -> list[WorkItem]:
        """Every part's selection, part by part."""
        items = [item for part in self.parts() for item in part.select()]
        if not items:
            raise ValueError("the selection holds no task")
        return items

    def local_gecko(self) -> LocalGecko:
        """The Gecko that `--gecko-url auto` starts: the first part's."""
        local = self.parts()[0].local_gecko()
        assert local is not None, "every part starts its own Gecko"
        return local

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> dict[str, Any]:
        """Each part's preflight on its own tasks and Gecko: the first part's is the run's (`--gecko-url`), the
        others' come from `--stateful-gecko-url` / `--memory-gecko-url` (started here when `auto`, stopped with the
        run)."""
        environment: dict[str, Any] = {}
        llm = None if is_scripted(self.settings.model) else context.llm()
        for index, part in enumerate(self.parts()):
            mine = [item for item in items if self._part(item.task) is part]
            if not mine:
                continue
            own = context
            if index:
                own = RunContext(context.run_name, replace(self.options, gecko_url=self._url_of(part)), llm=llm)
                context.adopt(own)
                own.start_local_gecko(part.local_gecko())
            environment[part.name] = {**await part.preflight(mine, own), "gecko_url": own.gecko_url,
                                      "settings": dict(part.config())}
        return environment

    async def run(self, item: WorkItem) -> TaskOutcome:
        """The task, the way of its own runner."""
        return await self._part(item.task).run(item)

    def score_task(self, task: Any, result: Any) -> EntryScore:
        return score_entry(task, result)

    def _split(self, entries: Sequence[LedgerEntry]) -> tuple[list[LedgerEntry], list[LedgerEntry]]:
        memory = [e for e in entries if e.group in MEMORY_CATEGORIES]
        return [e for e in entries if e.group not in MEMORY_CATEGORIES], memory

    def finish(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        """The result files and scores of every part (memory writes its own, prerequisites too), then one
        leaderboard table over every category scored."""
        others, memory = self._split(entries)
        evaluation = self.score_files(others, run_dir, complete)
        categories = dict(evaluation.metrics.get("categories") or {})
        lines = list(evaluation.lines)
        if self.memory is not None and memory:
            own = self.memory.finish(memory, run_dir, complete)
            categories |= own.metrics.get("categories") or {}
        merged = Evaluation({**evaluation.metrics, "categories": categories}, tuple(lines))
        result = with_leaderboard(merged, entries, run_dir)
        if self.not_run:
            result = Evaluation(result.metrics, (*result.lines, "not run (no value, never 0%): " + "; ".join(
                f"{category}: {why}" for category, why in sorted(self.not_run.items()))))
        return result

    def official_check(self, entries: Sequence[LedgerEntry], run_dir: Path) -> OfficialCheck:
        """`bfcl evaluate` on every part's files (memory's through its own check), beside our counts."""
        others, memory = self._split(entries)
        checks = [super().official_check(others, run_dir)] if any(e.status == "done" for e in others) else []
        if self.memory is not None and any(e.status == "done" for e in memory):
            checks.append(self.memory.official_check(memory, run_dir))
        if not checks:
            return OfficialCheck(problems=("the run has no scored task: nothing to check",))
        return OfficialCheck(tuple(row for c in checks for row in c.rows), tuple(x for c in checks for x in c.commands),
                             tuple(x for c in checks for x in c.problems), tuple(x for c in checks for x in c.notes))
