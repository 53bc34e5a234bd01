"""A benchmark of our own for the runner's tests: tasks whose outcome is scripted by their key."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.runner import (
    Evaluation,
    LedgerEntry,
    OfficialCheck,
    PreflightError,
    RunContext,
    RunOptions,
    TaskOutcome,
    WorkItem,
    add_selection_arguments,
    selected_ids,
)


class ScriptedBenchmark:
    """Tasks `t0 … t{n-1}` in groups `even`/`odd`. A key in `untested` is untested, in `raising` raises, in
    `slow` sleeps first; the others pass (score 1.0) or, in `failing`, score 0.0. `calls` counts every run."""

    name: ClassVar[str] = "scripted"
    default_gecko_url: ClassVar[str | None] = None
    default_workers: ClassVar[int] = 2
    offline_models: ClassVar[tuple[str, ...]] = ("scripted-oracle",)
    needs_gecko = False

    def __init__(self, count: int = 6, *, seed: int = 0, untested: Sequence[str] = (), raising: Sequence[str] = (),
                 failing: Sequence[str] = (), slow: Sequence[str] = (), preflight_error: str | None = None,
                 models: Mapping[str, str] | None = None) -> None:
        self.count, self.seed = count, seed
        self.untested, self.raising, self.failing, self.slow = set(untested), set(raising), set(failing), set(slow)
        self.preflight_error = preflight_error
        self._models = dict(models or {})
        self.ids: tuple[str, ...] | None = None
        """Keys given with `--ids` (None: every task)."""
        self.calls: list[str] = []
        self.finished: list[tuple[list[str], bool]] = []
        """(keys of the entries given, complete) of every `finish` call."""

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--count", type=int, default=6)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--untested", default="", help="keys that come out untested, comma separated")
        add_selection_arguments(parser, ids_help="keys")

    @classmethod
    def from_args(cls, args: argparse.Namespace, options: RunOptions) -> ScriptedBenchmark:
        bench = cls(args.count, seed=args.seed, untested=[k for k in args.untested.split(",") if k])
        bench.ids = selected_ids(args)
        return bench

    @classmethod
    def from_config(cls, config: Mapping[str, Any], options: RunOptions) -> ScriptedBenchmark:
        return cls(int(config["count"]), seed=int(config["seed"]))

    def config(self) -> dict[str, Any]:
        return {"count": self.count, "seed": self.seed, **({"ids": list(self.ids)} if self.ids else {})}

    def result_settings(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def run_label(self) -> str:
        return f"scripted_{self.seed}"

    def models(self) -> dict[str, str]:
        return self._models

    def local_gecko(self) -> None:
        return None

    def select(self) -> list[WorkItem]:
        if self.count < 0:
            raise ValueError("count must be >= 0")
        return [WorkItem(f"t{i}", "even" if i % 2 == 0 else "odd", i) for i in range(self.count)
                if self.ids is None or f"t{i}" in self.ids]

    async def preflight(self, items: Sequence[WorkItem], context: RunContext) -> dict[str, Any]:
        if self.preflight_error:
            raise PreflightError(self.preflight_error)
        return {"tasks": len(items)}

    async def run(self, item: WorkItem) -> TaskOutcome:
        self.calls.append(item.key)
        if item.key in self.slow:
            await asyncio.sleep(30)
        if item.key in self.raising:
            raise RuntimeError(f"bug in {item.key}")
        if item.key in self.untested:
            return TaskOutcome("untested", reason="Gecko down", trace={"id": item.key})
        score = 0.0 if item.key in self.failing else 1.0
        return TaskOutcome("done", score=score, record={"key": item.key, "answer": item.task},
                           info={"answer": item.task}, trace={"id": item.key, "score": score},
                           usage=[{"role": "planner", "model": "m", "input_tokens": 3, "output_tokens": 1}])

    def finish(self, entries: Sequence[LedgerEntry], run_dir: Path, complete: bool) -> Evaluation:
        self.finished.append(([e.key for e in entries], complete))
        done = [e.record for e in entries if e.status == "done"]
        (run_dir / "official.json").write_text(json.dumps(done))
        return Evaluation({"records": len(done)}, (f"official: {run_dir / 'official.json'}",))

    def official_check(self, entries: Sequence[LedgerEntry], run_dir: Path) -> OfficialCheck:
        records = json.loads((run_dir / "official.json").read_text())
        return OfficialCheck((("records", sum(e.status == "done" for e in entries), len(records)),), ("cat",))
