"""The LLM-driven engine (`llm`): a model writes each task from a shortlist of pool tools.

The engine picks the chain of tools as the template engine does (one stateful toolkit, same-resource steps, reads
of other apps; deterministic for a seed); the model makes it a task: realistic arguments that connect the steps,
the user's instruction and a checklist, as JSON constrained by a schema in which call i is tool i of the chain
with that tool's own arguments schema; the constraints (order, budget, format, preference, deadline) are
then derived from its reference exactly as for templated tasks and added to its instruction. Any
OpenAI-compatible model through `utils.llm` (role `task_writer`); the prompt is `prompts/task.md`.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from benchmarks.openworld.tasks.catalog import PoolCatalog, PoolTool
from benchmarks.openworld.tasks.constraints import build_constraints
from benchmarks.openworld.tasks.model import OpenWorldTask, ReferenceCall
from benchmarks.openworld.tasks.template import TemplateEngine
from utils.llm import LLMClient
from utils.llm.errors import LLMOutputError
from utils.llm.prompts import clip, inline_refs, load_prompt, stage_messages
from utils.roles import TASK_WRITER

PROMPT = load_prompt(Path(__file__).parent / "prompts" / "task.md")
SCHEMA_NAME = "gecko_openworld_task"


def chain(engine: TemplateEngine, index: int) -> list[PoolTool] | None:
    """The tools of candidate `index`, in order: the template engine's I/O chain of the same seed and index."""
    draft = engine.candidate(index)
    if draft is None:
        return None
    return [engine.catalog.tools(c.toolkit)[c.tool] for c in draft.reference]


def output_schema(tools: list[PoolTool]) -> dict[str, Any]:
    """The reply's JSON schema: call i is tool i of the chain, with that tool's own arguments schema."""
    steps = [{"type": "object", "additionalProperties": False, "required": ["tool", "arguments"],
              "properties": {"tool": {"const": t.key}, "arguments": inline_refs(t.args_schema)}} for t in tools]
    return {"type": "object", "additionalProperties": False, "required": ["instruction", "calls", "checklist"],
            "properties": {
                "instruction": {"type": "string", "minLength": 20, "maxLength": 6000},
                "calls": {"type": "array", "prefixItems": steps, "items": False, "minItems": len(steps)},
                "checklist": {"type": "array", "minItems": 1, "maxItems": 40,
                              "items": {"type": "string", "minLength": 1, "maxLength": 300}}}}


class LLMEngine:
    """Candidates written by `model`; `client` defaults to a new `LLMClient` (closed by `aclose`)."""

    name = "llm"

    def __init__(self, catalog: PoolCatalog, seed: int, model: str, client: LLMClient | None = None) -> None:
        from utils.llm import load_env

        load_env()
        self.template = TemplateEngine(catalog, seed)
        self.seed = seed
        self.model = model
        self._own = client is None
        self.client = client or LLMClient()
        self.usage: list[dict[str, Any]] = []

    async def aclose(self) -> None:
        """Close the client if this engine made it."""
        if self._own:
            await self.client.aclose()

    async def candidate(self, index: int) -> OpenWorldTask | str:
        """Candidate `index`, or why there is none (`no_chain`; `llm_output`: the reply did not fit, even repaired).

        Raises:
            utils.llm.LLMUsageError, LLMInfrastructureError: the model cannot be asked (the run stops).
        """
        tools = chain(self.template, index)
        if not tools:
            return "no_chain"
        by_key = {t.key: t for t in tools}
        listing = [{"step": n, "key": t.key, "app": t.app, "access": t.access, "does": t.summary,
                    "arguments": clip(inline_refs(t.args_schema), 3000)} for n, t in enumerate(tools, 1)]
        messages = stage_messages(PROMPT, [("chain", listing), ("apps", sorted({t.app for t in tools}))])
        try:
            reply = await self.client.structured_json(
                self.model, messages, output_schema(tools), role=TASK_WRITER.name, name=SCHEMA_NAME,
                prompt_version=PROMPT.version, usage=self.usage)
        except LLMOutputError:
            return "llm_output"
        value = reply.value
        calls = [ReferenceCall(toolkit=by_key[c["tool"]].toolkit, tool=by_key[c["tool"]].operation_id,
                               arguments=c["arguments"]) for c in value["calls"] if c.get("tool") in by_key]
        if not calls:
            return "llm_output"
        rng = random.Random(f"{self.seed}:{index}")
        labels = [f"the {by_key[f'{c.toolkit}/{c.tool}'].summary.rstrip('.')} step" for c in calls]
        writes = [i for i, c in enumerate(calls) if by_key[f"{c.toolkit}/{c.tool}"].access == "write"]
        earlier = {(c.toolkit, c.tool) for c in calls[:writes[0] + 1]} if writes else set()
        later = [j for j in range(len(calls)) if writes and j > writes[0] and (calls[j].toolkit, calls[j].tool)
                 not in earlier]
        constraints = build_constraints(calls, rng, (writes[0], later[0]) if later else None, labels,
                                        slack=rng.randint(2, 6))
        instruction = value["instruction"].strip()
        if constraints:
            instruction += "\nPlease keep to these: " + " ".join(c.text for c in constraints)
        budget = next((int(c.check["max_calls"]) for c in constraints if c.kind == "budget"), 2 * len(calls))
        return OpenWorldTask(
            id=f"llm-{self.seed}-{index}", instruction=instruction,
            apps=tuple(dict.fromkeys(by_key[f"{c.toolkit}/{c.tool}"].app for c in calls)),
            toolkits=tuple(dict.fromkeys(c.toolkit for c in calls)), constraints=tuple(constraints),
            checklist=tuple(dict.fromkeys([*value["checklist"], *(f"Constraint kept: {c.text}" for c in constraints)])),
            reference=tuple(calls), max_calls=max(budget, len(calls)),
            origin={"engine": self.name, "seed": self.seed, "index": index, "model": self.model,
                    "prompt": PROMPT.version})

    async def stream(self, count: int) -> AsyncIterator[OpenWorldTask | str]:
        """`count` candidates in order."""
        for index in range(count):
            yield await self.candidate(index)
