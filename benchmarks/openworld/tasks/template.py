"""The deterministic engine (`template`): tasks built from tool I/O chains of the pool, no model needed.

A task anchors on one stateful toolkit (several tools, at least one write): a write, then tools of the same
toolkit that share an argument with what was already done (the same record read back, changed, used again), with
values carried over by name. Reads from other apps join before or after, taking shared values where names match
(a city, a date, a user). Arguments are generated from each tool's schema with a seed (`utils.schema.instance`),
so a seed gives the same tasks every time. Constraints come from `constraints.py`; the instruction and the
checklist are written from the tools' summaries.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from benchmarks.openworld.tasks.catalog import PoolCatalog, PoolTool
from benchmarks.openworld.tasks.constraints import build_constraints
from benchmarks.openworld.tasks.model import OpenWorldTask, ReferenceCall
from utils.schema.instance import UnsatisfiableSchema, generate_instance

ANCHOR_MAX_TOOLS = 300
"""Toolkits with more tools than this (GitHub's whole REST API) only contribute side reads."""
MAX_CALLS = 30
STATELESS_SOURCES = frozenset({"bfcl-single-turn"})
"""Sources of independent functions (no shared state): they join tasks as side reads, never as the anchor,
unless the pool has nothing else."""


@dataclass(frozen=True)
class Step:
    """One planned call: the tool, its arguments, and the words for it."""

    tool: PoolTool
    arguments: dict[str, Any]

    @property
    def label(self) -> str:
        summary = self.tool.summary.rstrip(".").strip() or self.tool.name
        return f"{summary[0].lower()}{summary[1:]} ({self.tool.app})"


def _words(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}."


def describe(step: Step) -> str:
    """One step of the instruction, in words."""
    if not step.arguments:
        return step.label
    shown = ", ".join(f"{k} {_words(v)}" for k, v in list(step.arguments.items())[:6])
    return f"{step.label} with {shown}"


class TemplateEngine:
    """Candidates from the pool, deterministic for a seed."""

    name = "template"

    def __init__(self, catalog: PoolCatalog, seed: int) -> None:
        self.catalog = catalog
        self.seed = seed
        entries = catalog.by_toolkit
        anchors = [t for t, tools in entries.items()
                   if 3 <= len(tools) <= ANCHOR_MAX_TOOLS and any(e["access"] == "write" for e in tools)]
        stateful = [t for t in anchors if catalog.source_of(t) not in STATELESS_SOURCES]
        self.anchors = stateful or anchors
        self.readers = [t for t, tools in entries.items() if any(e["access"] == "read" for e in tools)]
        if not self.anchors:
            raise ValueError(f"{catalog.root}: no toolkit has three tools and a write to anchor a task on")

    def _args(self, tool: PoolTool, seed: str, bound: dict[str, Any]) -> dict[str, Any] | None:
        try:
            value = generate_instance(tool.args_schema, seed, bound)
        except (UnsatisfiableSchema, RecursionError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def _anchor_chain(self, rng: random.Random, toolkit: str, length: int, key: str,
                      bound: dict[str, Any]) -> list[Step]:
        tools = [t for t in self.catalog.tools(toolkit).values() if t.args_schema.get("type") == "object"]
        writes = [t for t in tools if t.access == "write"]
        if not writes:
            return []
        first = rng.choice(writes)
        steps: list[Step] = []
        current: PoolTool | None = first
        while current is not None and len(steps) < length:
            args = self._args(current, f"{key}:{len(steps)}", bound)
            if args is not None:
                steps.append(Step(current, args))
                bound.update({k: v for k, v in args.items() if isinstance(v, (str, int, bool))})
            used = {s.tool.key for s in steps}
            linked = [t for t in tools if set(t.argument_names) & set(bound) and t.key not in used]
            fresh = [t for t in tools if t.key not in used]
            pool = linked if linked and rng.random() < 0.8 else (fresh or tools)
            current = rng.choice(pool) if pool else None
        return steps

    def _side_reads(self, rng: random.Random, exclude_app: str, apps: int, key: str,
                    bound: dict[str, Any]) -> list[Step]:
        others = [t for t in self.readers if self.catalog.app_of(t) != exclude_app]
        rng.shuffle(others)
        steps: list[Step] = []
        used_apps: set[str] = set()
        for toolkit in others:
            if len(used_apps) >= apps:
                break
            app = self.catalog.app_of(toolkit)
            if app in used_apps:
                continue
            reads = sorted((t for t in self.catalog.tools(toolkit).values()
                            if t.access == "read" and t.args_schema.get("type") == "object"),
                           key=lambda t: (-len(set(t.argument_names) & set(bound)), t.operation_id))
            if not reads:
                continue
            count = rng.randint(1, min(3, len(reads)))
            picked = reads[:1] + rng.sample(reads[1:], min(count - 1, len(reads) - 1))
            for tool in picked:
                args = self._args(tool, f"{key}:side:{tool.key}", bound)
                if args is not None:
                    steps.append(Step(tool, args))
            used_apps.add(app)
        return steps

    def candidate(self, index: int) -> OpenWorldTask | None:
        """Candidate `index` of this seed (None when the draw gave no usable chain)."""
        key = f"{self.seed}:{index}"
        rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
        anchor = rng.choice(self.anchors)
        bound: dict[str, Any] = {}
        chain = self._anchor_chain(rng, anchor, rng.randint(3, 10), key, bound)
        if not chain:
            return None
        side = self._side_reads(rng, self.catalog.app_of(anchor), rng.randint(1, 3), key, bound)
        cut = rng.randint(0, len(side))
        steps = (side[:cut] + chain + side[cut:])[:MAX_CALLS]
        return build_task(f"template-{self.seed}-{index}", steps, rng, {"engine": self.name, "seed": self.seed,
                                                                      "index": index, "anchor": anchor})

    def candidates(self, count: int) -> Iterator[OpenWorldTask | None]:
        """`count` candidates in order (None for a draw that gave nothing)."""
        for index in range(count):
            yield self.candidate(index)

    async def stream(self, count: int) -> AsyncIterator[OpenWorldTask | None]:
        """`candidates` for `make_taskset`."""
        for candidate in self.candidates(count):
            yield candidate


def build_task(task_id: str, steps: list[Step], rng: random.Random, origin: dict[str, Any]) -> OpenWorldTask:
    """A task from planned steps: reference, constraints, instruction and checklist."""
    calls = [ReferenceCall(toolkit=s.tool.toolkit, tool=s.tool.operation_id, arguments=s.arguments) for s in steps]
    labels = [s.label for s in steps]
    writes = [i for i, s in enumerate(steps) if s.tool.access == "write"]
    earlier = {(c.toolkit, c.tool) for c in calls[:writes[0] + 1]} if writes else set()
    later = [j for j in range(len(steps)) if writes and j > writes[0] and (calls[j].toolkit, calls[j].tool) not in earlier]
    order_pair = (writes[0], later[0]) if later else None
    constraints = build_constraints(calls, rng, order_pair, labels, slack=rng.randint(2, 6))
    apps = tuple(dict.fromkeys(s.tool.app for s in steps))
    lines = [f"I need help with a few things across {', '.join(apps)}. In this order:"]
    lines += [f"{n}. {_sentence(describe(s))}" for n, s in enumerate(steps, 1)]
    if constraints:
        lines.append("Please keep to these: " + " ".join(c.text for c in constraints))
    checklist = [f"{'Done' if s.tool.access == 'write' else 'Looked up and reported'}: {describe(s)}"
                 for s in steps]
    checklist += [f"Constraint kept: {c.text}" for c in constraints]
    budget = next((int(c.check["max_calls"]) for c in constraints if c.kind == "budget"), len(calls) * 2)
    return OpenWorldTask(
        id=task_id, instruction="\n".join(lines), apps=apps,
        toolkits=tuple(dict.fromkeys(c.toolkit for c in calls)), constraints=tuple(constraints),
        checklist=tuple(dict.fromkeys(checklist)), reference=tuple(calls), max_calls=max(budget, len(calls)),
        origin=origin)
