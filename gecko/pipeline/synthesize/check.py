"""`--check`'s answerability test: every operation's response is synthesized once, as the rules engine would."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from gecko.pipeline.synthesize.rules import synthesize_rules
from gecko.toolkits.registry import ToolkitRegistry
from utils.schema.instance import SchemaCache, UnsatisfiableSchema

CHECK_SEED = "gecko-check"
PROGRESS_EVERY_S = 5.0


@dataclass(frozen=True)
class Unanswerable:
    """A tool whose response schema the synthesizer cannot satisfy: every call of it would answer 500."""

    tool: str
    """`toolkit/operationId`."""
    problem: str


def unanswerable_tools(registry: ToolkitRegistry,
                       progress: Callable[[str], None] | None = None) -> list[Unanswerable]:
    """The tools of `registry` for which no schema-valid response can be synthesized (empty arguments); `progress`
    hears how far it got every few seconds."""
    cache = SchemaCache()
    found = []
    done, said = 0, time.monotonic()
    for toolkit in registry.toolkits.values():
        for op in toolkit.operations.values():
            done += 1
            if progress is not None and time.monotonic() - said >= PROGRESS_EVERY_S:
                progress(f"synthesized {done - 1} of {registry.tool_count} responses")
                said = time.monotonic()
            try:
                synthesize_rules(op, {}, CHECK_SEED, cache)
            except (UnsatisfiableSchema, RecursionError) as exc:
                found.append(Unanswerable(op.tool_name, " ".join(str(exc).split())[:300]))
    return found
