"""GATS hybrid mode on tau2 (paper §6.1): simulated rehearsals before each agent reply.

Before the agent answers a customer message:

1. the real tool calls made since the last rehearsal are synced into the conversation's Gecko session
   (`/update-state-from-real`): the session holds what the real conversation has observed;
2. `gats.run_turn` runs up to `retries + 1` rehearsals on forks of that session. In a rehearsal, read tools
   run for real on a scratch copy of the current DB and write tools are simulated by Gecko (the mock
   toolkit); real reads are synced into the fork before the next simulated write
   (`inference.tools.HybridToolBackend`). Each rehearsal is judged on a checklist Gecko draws from the
   conversation and the policy;
3. every rehearsal and its review is rendered (`prompts/gats_reference.md`) as non-authoritative notes
   for the real agent, which then acts on the real DB.

GATS sees only the conversation, the policy and the tools: never the task or its evaluation criteria
(nothing here accepts a `Task`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from benchmarks.taubench.agent_tools import EnvironmentBackend
from benchmarks.taubench.environment import DomainRuntime, Environment
from benchmarks.taubench.llm_chat import agent_view, prompt, render
from benchmarks.taubench.messages import AssistantMessage, Message, ToolMessage, UserMessage
from benchmarks.taubench.orchestrator import user_view
from gats import GatsConfig, TurnInput, TurnResult, run_turn
from inference.agents import Agent as RolloutAgent
from inference.gecko import ChecklistReply, GeckoClient, GeckoError, GeckoSandbox, JudgeReply
from inference.tools import CallRecord, ToolCatalog, ToolInfrastructureError
from inference.tools.hybrid import HybridToolBackend, ObservedCall
from utils.faults import FaultPolicy

MAX_RESULT_CHARS = 600
MAX_CONVERSATION_CHARS = 6000


class GatsUnavailableError(Exception):
    """Gecko failed, or a rehearsal of a turn failed for infrastructure reasons: the run is untested."""


class HybridSandbox:
    """`gats.ports.Sandbox` whose tool backends run reads on a scratch DB and writes in Gecko.

    Args:
        gecko: the Gecko sandbox (forks, checklist, judge, usage).
        environment: the real conversation's environment (copied, never touched).
        backends: receives every backend built (for call counts).
    """

    def __init__(self, gecko: GeckoSandbox, environment: Environment, backends: list[HybridToolBackend]) -> None:
        self.gecko = gecko
        self.environment = environment
        self.backends = backends

    async def fork(self, session_id: str, *, labels: Mapping[str, str] | None = None, note: str | None = None) -> str:
        """A fork of the session (labels and note as `gats.ports.Sandbox.fork`)."""
        return await self.gecko.fork(session_id, labels=labels, note=note)

    async def delete(self, session_id: str) -> None:
        """Drop a fork."""
        await self.gecko.delete(session_id)

    def backend(self, session_id: str) -> HybridToolBackend:
        """Reads on a fresh copy of the real DB, writes in `session_id`; reads synced before writes."""
        client = self.gecko.client

        async def sync(calls: Sequence[ObservedCall]) -> None:
            try:
                await client.update_state_from_real(session_id, [c.sync_record() for c in calls])
            except GeckoError as exc:
                raise ToolInfrastructureError(f"sync of real reads failed: {exc}") from exc

        backend = HybridToolBackend(EnvironmentBackend(self.environment.fork()), self.gecko.backend(session_id),
                                    sync=sync)
        self.backends.append(backend)
        return backend

    async def checklist(self, session_id: str, task: str, previous_tasks: Sequence[str]) -> ChecklistReply:
        """The objectives of the turn."""
        return await self.gecko.checklist(session_id, task, previous_tasks)

    async def judge(self, session_id: str, *, task: str, agent_response: str | None,
                    checklist: Sequence[dict[str, str]] | None, expects_tool_call: bool = False) -> JudgeReply:
        """The verdict on a rehearsal."""
        return await self.gecko.judge(session_id, task=task, agent_response=agent_response, checklist=checklist,
                                      expects_tool_call=expects_tool_call)

    async def usage(self, session_id: str) -> list[dict[str, Any]]:
        """Gecko's LLM usage in a fork."""
        return await self.gecko.usage(session_id)


@dataclass
class GatsStats:
    """Counts over one conversation."""

    turns: int = 0
    attempts: int = 0
    real_reads: int = 0
    simulated_calls: int = 0
    synced_calls: int = 0
    latency_s: float = 0.0
    usage: list[dict[str, Any]] = field(default_factory=list)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def turn_task(history: Sequence[Message], policy: str) -> tuple[str, tuple[str, ...]]:
    """The checklist/judge task of a turn (conversation texts, latest message, policy) and the earlier
    customer messages. Built from the conversation only."""
    texts = user_view(history)
    lines = [f"{'customer' if isinstance(m, UserMessage) else 'agent'}: {m.content or ''}" for m in texts[:-1]]
    conversation = "\n".join(lines)
    if len(conversation) > MAX_CONVERSATION_CHARS:
        conversation = "... " + conversation[-MAX_CONVERSATION_CHARS:]
    latest = texts[-1].content or "" if texts else ""
    previous = tuple(m.content or "" for m in texts[:-1] if isinstance(m, UserMessage))
    return render(prompt("gats_task"), conversation=conversation or "(none)", latest=latest, policy=policy), previous


def render_reference(result: TurnResult, real_names: frozenset[str]) -> str:
    """The rehearsals of a turn as non-authoritative notes for the real agent (failures included)."""
    blocks = []
    for attempt in result.attempts:
        verdict = attempt.verdict
        review = (f"review: {attempt.status}" + (f", score {verdict.score:.2f}" if verdict else "")
                  + (f" ({attempt.error})" if attempt.error else ""))
        lines = [f"Rehearsal {attempt.index + 1} ({review})"]
        for number, call in enumerate(attempt.calls, start=1):
            where = "real look-up on a copy" if call.name in real_names else "SIMULATED, not done"
            status = "ok" if call.outcome.ok else "failed"
            arguments = call.raw_arguments if call.arguments is None else str(call.arguments)
            lines.append(f"  {number}. {call.agent_name}({_clip(arguments, 300)}) [{where}, {status}]: "
                         f"{_clip(call.outcome.content, MAX_RESULT_CHARS)}")
        if attempt.final_text:
            lines.append(f"  Proposed reply: {_clip(attempt.final_text, MAX_RESULT_CHARS)}")
        if verdict is not None and verdict.remaining:
            lines.append("  Reviewer found unmet: " + "; ".join(_clip(r, 200) for r in verdict.remaining))
        blocks.append("\n".join(lines))
    return render(prompt("gats_reference"), rehearsals="\n\n".join(blocks) or "(no rehearsal ran)")


def _json_or_text(text: Optional[str]) -> Any:
    try:
        return json.loads(text or "")
    except ValueError:
        return text or ""


def real_calls_since(history: Sequence[Message], start: int) -> tuple[list[dict[str, Any]], int]:
    """`/update-state-from-real` records of the agent's tool calls in `history[start:]` that have a result,
    and the index to start from next time."""
    results = {m.id: m for m in history[start:] if isinstance(m, ToolMessage)}
    records = []
    for message in history[start:]:
        if isinstance(message, AssistantMessage) and message.tool_calls:
            for call in message.tool_calls:
                result = results.get(call.id)
                if result is not None and not result.error:
                    records.append({"name": call.name, "arguments": call.arguments, "result": _json_or_text(result.content)})
    return records, len(history)


class HybridGats:
    """GATS hybrid mode for one conversation.

    Args:
        gecko: the Gecko client (shared).
        runtime: the domain (policy, tool kinds).
        catalog: the agent's tools (toolkit = the domain, served by Gecko from the mock toolkit).
        environment: the real conversation's environment (read, never mutated here).
        rollout_agent: builds the agent of one turn's rehearsals (given the conversation so far).
        config: retries and judging (`generate_checklist=True` for the checklist from Gecko).
        labels: labels of the conversation's Gecko session (run, task, trial), shown in Gecko's viewer.
        faults: the session's fault policy (the fault arm of a `--faults` run): the rehearsals' simulated calls
            meet it (every rehearsal's fork inherits it); their real reads on the scratch DB do not.
    """

    def __init__(self, gecko: GeckoClient, runtime: DomainRuntime, catalog: ToolCatalog, environment: Environment,
                 rollout_agent: Callable[[Sequence[Message]], RolloutAgent], config: GatsConfig,
                 labels: Mapping[str, str] | None = None, faults: FaultPolicy | None = None) -> None:
        self.gecko = gecko
        self.runtime = runtime
        self.catalog = catalog
        self.environment = environment
        self.rollout_agent = rollout_agent
        self.config = config
        self.labels = dict(labels or {})
        self.faults = faults
        self.episodes: list[tuple[CallRecord, ...]] = []
        """Every rehearsal's calls (robustness metrics: one episode each)."""
        self.session_id: Optional[str] = None
        self._synced_upto = 0
        self.stats = GatsStats()
        self.turns: list[dict[str, Any]] = []
        self._reads = frozenset(s.original_name for s in catalog.specs if s.access == "read")

    async def _sync(self, history: Sequence[Message]) -> int:
        if self.session_id is None:
            config: dict[str, Any] = {"toolkits": [self.runtime.name], "labels": self.labels}
            if self.faults is not None:
                config["faults"] = self.faults.public()
            self.session_id = (await self.gecko.create_session(config)).session_id
        records, self._synced_upto = real_calls_since(history, self._synced_upto)
        if records:
            for record in records:
                record["toolkit"] = self.runtime.name
            await self.gecko.update_state_from_real(self.session_id, records)
        return len(records)

    async def reference(self, history: Sequence[Message]) -> str:
        """Rehearse the reply to the latest customer message; the notes for the real agent.

        Raises:
            GatsUnavailableError: Gecko failed or no rehearsal could run.
        """
        started = time.perf_counter()
        try:
            synced = await self._sync(history)
        except GeckoError as exc:
            raise GatsUnavailableError(f"Gecko session or sync failed: {exc}") from exc
        assert self.session_id is not None
        task, previous = turn_task(history, self.runtime.policy)
        turn = TurnInput(task=task, messages=tuple(agent_view(history)), base_session_id=self.session_id,
                         previous_tasks=previous)
        backends: list[HybridToolBackend] = []
        sandbox = HybridSandbox(GeckoSandbox(self.gecko), self.environment, backends)
        result = await run_turn(turn, self.rollout_agent(history), sandbox, self.catalog, self.config)
        if result.status == "untested":
            raise GatsUnavailableError(f"rehearsal failed for infrastructure reasons: {result.failure}")
        reference = render_reference(result, self._reads)
        elapsed = time.perf_counter() - started
        stats = self.stats
        stats.turns += 1
        stats.attempts += len(result.attempts)
        stats.real_reads += sum(b.real_calls for b in backends)
        stats.simulated_calls += sum(b.simulated_calls for b in backends)
        stats.synced_calls += synced
        stats.latency_s += elapsed
        stats.usage.extend(result.usage)
        self.episodes.extend(attempt.calls for attempt in result.attempts)
        self.turns.append({
            "at_message": len(history), "status": result.status, "best": result.best_index, "synced_calls": synced,
            "checklist": [o.description for o in result.checklist or ()], "checklist_error": result.checklist_error,
            "attempts": [{"index": a.index, "status": a.status, "score": a.verdict.score if a.verdict else None,
                          "remaining": list(a.verdict.remaining) if a.verdict else None, "error": a.error,
                          "final_text": a.final_text, "calls": [c.public() for c in a.calls],
                          "feedback": a.feedback.text if a.feedback is not None else None,
                          "usage_by_role": a.usage_by_role(), "latency_s": {"total": round(a.latency.total_s, 6)}}
                         for a in result.attempts],
            "latency_s": round(elapsed, 4),
        })
        return reference

    async def close(self) -> None:
        """Drop the conversation's Gecko session (unless sessions are kept for inspection)."""
        if self.session_id is not None and not self.config.keep_sessions:
            try:
                await self.gecko.delete_session(self.session_id)
            except GeckoError:
                pass  # sessions expire anyway

    def record(self) -> dict[str, Any]:
        """What GATS did in this conversation (stored under the simulation's `info`)."""
        s = self.stats
        return {"mode": "hybrid", "turns": s.turns, "attempts": s.attempts, "real_reads": s.real_reads,
                "simulated_calls": s.simulated_calls, "synced_calls": s.synced_calls,
                "latency_s": round(s.latency_s, 4), "rehearsals": self.turns}


def rehearsal_trace(key: str, gats: dict[str, Any]) -> dict[str, Any] | None:
    """A conversation's trace line from its GATS record (`HybridGats.record`): each rehearsed reply as a turn of
    attempts, in the runner's `turns[].simulated` shape that the run report and `gecko view` read; None without
    GATS."""
    rehearsals = gats.get("rehearsals")
    if not isinstance(rehearsals, list):
        return None
    return {"id": key, "mode": gats.get("mode"), "turns": [
        {"index": index, "status": turn.get("status"), "at_message": turn.get("at_message"),
         "latency_s": turn.get("latency_s"),
         "simulated": {"status": turn.get("status"), "best": turn.get("best"), "checklist": turn.get("checklist"),
                       "checklist_error": turn.get("checklist_error"), "attempts": turn.get("attempts") or []}}
        for index, turn in enumerate(rehearsals)]}


class GatsAgent:
    """Wraps a tau2 agent: before each reply to a customer message, GATS rehearses it; an agent with a
    `reference` parameter (`LLMAgent`) reads the notes, a scripted one ignores them.

    Args:
        inner: the real agent.
        gats: the conversation's GATS.
    """

    def __init__(self, inner: Any, gats: HybridGats) -> None:
        self.inner = inner
        self.gats = gats
        self.references: list[str] = []

    async def generate(self, history: Sequence[Message]) -> AssistantMessage:
        """The inner agent's reply, after a rehearsal when the last message is the customer's."""
        reference: Optional[str] = None
        if history and isinstance(history[-1], UserMessage):
            reference = await self.gats.reference(history)
            self.references.append(reference)
        if getattr(self.inner, "accepts_reference", False):
            return await self.inner.generate(history, reference)
        return await self.inner.generate(history)
