"""Make a task set: draw candidates from an engine, validate each (`validate.py`), write what was kept.

`make_taskset` is the library entry; `gecko openworld tasks` (cli.py) wraps it with a Gecko server.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from benchmarks.openworld.tasks.catalog import PoolCatalog
from benchmarks.openworld.tasks.model import (
    MANIFEST_FILE,
    TASKS_FILE,
    OpenWorldTask,
    TaskSetManifest,
    write_tasks,
)
from benchmarks.openworld.tasks.validate import Verdict, reference_key, run_reference, static_verdict
from inference.gecko.client import GeckoClient

CONCURRENCY = 8
"""Reference runs in flight at once."""


class Engine(Protocol):
    """What `make_taskset` draws from."""

    name: str

    def stream(self, count: int) -> AsyncIterator[OpenWorldTask | str | None]:
        """`count` candidates in order; instead of a task, why there is none (None: `no_chain`)."""
        ...


@dataclass
class TaskSetResult:
    """What was made."""

    tasks: list[OpenWorldTask]
    manifest: TaskSetManifest
    reasons: dict[str, list[str]] = field(default_factory=dict)
    """Drop reason → the first few details (task id: what failed), for the log."""

    def summary(self) -> dict[str, object]:
        """The JSON summary the command prints."""
        seconds = self.manifest.seconds or 0.0
        per_hour = round(self.manifest.generated / seconds * 3600) if seconds else None
        return {"engine": self.manifest.engine, "seed": self.manifest.seed, "model": self.manifest.model,
                "generated": self.manifest.generated, "kept": self.manifest.kept,
                "dropped": self.manifest.dropped, "seconds": seconds, "tasks_per_hour": per_hour,
                "kept_per_hour": round(self.manifest.kept / seconds * 3600) if seconds else None}


async def make_taskset(engine: Engine, catalog: PoolCatalog, client: GeckoClient, count: int, *,
                       seed: int | None, model: str | None = None) -> TaskSetResult:
    """Draw `count` candidates, validate them, keep the good ones in candidate order."""
    started = time.perf_counter()
    writes = {(e["toolkit"], e["operation_id"]) for e in catalog.entries if e["access"] == "write"}
    dropped: Counter[str] = Counter()
    details: dict[str, list[str]] = {}
    seen: set[str] = set()
    pending: list[tuple[OpenWorldTask, asyncio.Task[Verdict]]] = []
    gate = asyncio.Semaphore(CONCURRENCY)

    async def run(task: OpenWorldTask) -> Verdict:
        async with gate:
            return await run_reference(client, task)

    def drop(reason: str, detail: str) -> None:
        dropped[reason] += 1
        details.setdefault(reason, [])
        if len(details[reason]) < 5:
            details[reason].append(detail)

    generated = 0
    async for candidate in engine.stream(count):
        generated += 1
        if not isinstance(candidate, OpenWorldTask):
            drop(candidate or "no_chain", f"candidate {generated}")
            continue
        verdict = static_verdict(candidate, writes, seen)
        if not verdict.kept:
            drop(verdict.reason, f"{candidate.id}: {verdict.detail}")
            continue
        seen.add(reference_key(candidate))
        pending.append((candidate, asyncio.create_task(run(candidate))))
    kept = []
    try:
        for candidate, job in pending:
            verdict = await job
            if verdict.kept:
                kept.append(candidate)
            else:
                drop(verdict.reason, f"{candidate.id}: {verdict.detail}")
    finally:
        for _, job in pending:
            job.cancel()
        await asyncio.gather(*(job for _, job in pending), return_exceptions=True)
    manifest = TaskSetManifest(pool=str(catalog.root), engine=engine.name, seed=seed, model=model,
                               generated=generated, kept=len(kept), dropped=dict(sorted(dropped.items())),
                               seconds=round(time.perf_counter() - started, 3))
    return TaskSetResult(kept, manifest, details)


def write_taskset(out: Path, result: TaskSetResult) -> None:
    """`out/tasks.jsonl` and `out/taskset.json`."""
    out.mkdir(parents=True, exist_ok=True)
    write_tasks(out / TASKS_FILE, result.tasks)
    tmp = out / (MANIFEST_FILE + ".tmp")
    tmp.write_text(result.manifest.model_dump_json(indent=1) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST_FILE)
