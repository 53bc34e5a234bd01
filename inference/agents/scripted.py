"""Scripted agents for offline runs (no model): `scripted-oracle` and `scripted-noisy`.

They are test instruments, not models: they exist so the whole pipeline, GATS included, runs and is
tested with no LLM. Both make their calls through the same `ToolExecutor` as the planner, by the agent
names of the catalog, in one assistant message (parallel calls), then answer with a fixed text.

- `ScriptedOracleAgent` replays a script: the correct calls of the task (e.g. the ground truth).
- `ScriptedNoisyAgent` replays the script with seeded errors (see `noise.py` for the kinds and rates).
  On a retry it reads the structured feedback (the previous attempt's calls and results) and fixes only the
  errors that feedback names; errors nothing names, such as semantic ones under a rules validator, stay.
  One instance serves the attempts of one task turn (it remembers what it fixed).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inference.agents.base import AgentInfrastructureError, AgentRequest, AgentRun, AgentStep
from inference.agents.noise import (
    DEFAULT_ERROR_RATE,
    NOISE_KINDS,
    Corruption,
    NoiseKind,
    is_named,
    plan_corruptions,
)
from inference.tools.catalog import ToolCatalog
from inference.tools.execution import CallRecord, ToolCallRequest, ToolExecutor, ToolInfrastructureError

ORACLE_NAME = "scripted-oracle"
NOISY_NAME = "scripted-noisy"
DONE_TEXT = "Done."
NO_CALL_TEXT = "None of the available functions fits this request, so I made no call."
_CALL_ID = "scripted_{index}"


@dataclass(frozen=True)
class ScriptedCall:
    """One call of a script, by the tool's original name (`math.factorial`)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


def _agent_name(catalog: ToolCatalog, name: str) -> str:
    spec = catalog.by_original_name(name) or catalog.resolve(name)
    return spec.agent_name if spec is not None else name


async def _play(agent: str, calls: Sequence[ToolCallRequest], tools: ToolExecutor, started: float) -> AgentRun:
    records: list[CallRecord] = []
    try:
        for call in calls:
            records.append(await tools.execute(call, 0))
    except ToolInfrastructureError as exc:
        partial = AgentRun(agent, (AgentStep(0, None, tuple(records)),), None, "max_steps",
                           latency_s=time.perf_counter() - started)
        raise AgentInfrastructureError(f"tool backend failed: {exc}", partial) from exc
    if not calls:
        return AgentRun(agent, (AgentStep(0, NO_CALL_TEXT, ()),), NO_CALL_TEXT, "answer",
                        latency_s=time.perf_counter() - started)
    steps = (AgentStep(0, None, tuple(records)), AgentStep(1, DONE_TEXT, ()))
    return AgentRun(agent, steps, DONE_TEXT, "answer", latency_s=time.perf_counter() - started)


class ScriptedOracleAgent:
    """Replays the correct calls.

    Args:
        script: The calls to make, in order.
    """

    name = ORACLE_NAME

    def __init__(self, script: Sequence[ScriptedCall]) -> None:
        self.script = tuple(script)

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Make the scripted calls in one step, then answer `Done.` (or explain that no call fits)."""
        started = time.perf_counter()
        calls = [ToolCallRequest(_CALL_ID.format(index=i), _agent_name(tools.catalog, c.name), dict(c.arguments))
                 for i, c in enumerate(self.script)]
        return await _play(self.name, calls, tools, started)


class ScriptedNoisyAgent:
    """Replays the correct calls with seeded errors, and fixes what the feedback names.

    Args:
        script: The correct calls.
        key: Per-task part of the seed (the task id).
        seed: Run seed.
        error_rate: Probability that a call is corrupted.
        kinds: Error kinds that may be drawn.
    """

    name = NOISY_NAME

    def __init__(self, script: Sequence[ScriptedCall], *, key: str, seed: int = 0,
                 error_rate: float = DEFAULT_ERROR_RATE, kinds: Sequence[NoiseKind] = NOISE_KINDS) -> None:
        self.script = tuple(script)
        self.key = key
        self.seed = seed
        self.error_rate = error_rate
        self.kinds = tuple(kinds)
        self.corruptions: tuple[Corruption | None, ...] | None = None
        """Drawn on the first run (the tool schemas come from the catalog)."""
        self.fixed: set[int] = set()
        """Indexes of the calls whose corruption feedback has named (and which are now correct)."""

    def _plan(self, catalog: ToolCatalog) -> tuple[Corruption | None, ...]:
        if self.corruptions is None:
            resolved = [(catalog.by_original_name(c.name) or catalog.resolve(c.name), c.arguments)
                        for c in self.script]
            self.corruptions = plan_corruptions(resolved, key=self.key, seed=self.seed, error_rate=self.error_rate,
                                                kinds=self.kinds, taken_names=set(catalog.by_agent_name))
        return self.corruptions

    def _apply_feedback(self, previous: Sequence[CallRecord]) -> None:
        by_index: dict[int, CallRecord] = {}
        for record in previous:
            prefix, _, number = record.call_id.rpartition("_")
            if prefix == "scripted" and number.isdigit():
                by_index[int(number)] = record
        for corruption in self.corruptions or ():
            if corruption is not None and is_named(corruption, by_index.get(corruption.call_index)):
                self.fixed.add(corruption.call_index)

    def describe(self) -> dict[str, Any]:
        """The injected errors and whether feedback got them fixed (for traces and the demo)."""
        return {"seed": self.seed, "error_rate": self.error_rate, "corruptions": [
            {**c.public(), "fixed": c.call_index in self.fixed} for c in self.corruptions or () if c is not None]}

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Make the (partly corrupted) calls; on a retry, first fix what the feedback names."""
        started = time.perf_counter()
        plan = self._plan(tools.catalog)
        if request.feedback is not None:
            self._apply_feedback(request.feedback.calls)
        calls: list[ToolCallRequest] = []
        for index, call in enumerate(self.script):
            corruption = plan[index]
            call_id = _CALL_ID.format(index=index)
            if corruption is not None and index not in self.fixed:
                calls.append(ToolCallRequest(call_id, corruption.name, dict(corruption.arguments)))
            else:
                calls.append(ToolCallRequest(call_id, _agent_name(tools.catalog, call.name), dict(call.arguments)))
        return await _play(self.name, calls, tools, started)
