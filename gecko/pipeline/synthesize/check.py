"""`--check`'s answerability test: every operation's response is synthesized once, as the rules engine would."""

from __future__ import annotations

from dataclasses import dataclass

from gecko.pipeline.synthesize.rules import synthesize_rules
from gecko.toolkits.registry import ToolkitRegistry
from utils.schema.instance import SchemaCache, UnsatisfiableSchema

CHECK_SEED = "gecko-check"


@dataclass(frozen=True)
class Unanswerable:
    """A tool whose response schema the synthesizer cannot satisfy: every call of it would answer 500."""

    tool: str
    """`toolkit/operationId`."""
    problem: str


def unanswerable_tools(registry: ToolkitRegistry) -> list[Unanswerable]:
    """The tools of `registry` for which no schema-valid response can be synthesized (empty arguments)."""
    cache = SchemaCache()
    found = []
    for toolkit in registry.toolkits.values():
        for op in toolkit.operations.values():
            try:
                synthesize_rules(op, {}, CHECK_SEED, cache)
            except (UnsatisfiableSchema, RecursionError) as exc:
                found.append(Unanswerable(op.tool_name, " ".join(str(exc).split())[:300]))
    return found
