"""Playing BFCL memory conversations as the official runner plays them, with GATS rehearsals on Gecko.

```
entry (prerequisite or question) → fresh MemoryAPI_<backend> loaded from the scenario's snapshot (`_load_scenario`)
  → a Gecko session on the class's toolkit, seeded with that memory (`/init-session-state`)
  → the official memory system prompt (scenario setting + core memory) before the first turn's messages
  → per user turn (`gats.turns.run_conversation`): GATS attempts on forks of the session (Gecko simulates the
    memory tools), a plan from the best one, the agent on the REAL memory class, its calls synced into the session
  → prerequisite: `_flush_memory_to_local_file()` (the next entry of the scenario starts from it)
  → per turn, one step text per real agent step: `[f(a=1)]` for a step with calls, the message text otherwise
```

`play_prereqs` plays a scenario's prerequisite conversations in order once; `play_entry` plays one entry. An entry
whose conversation is `untested` (Gecko or the LLM down, a failed sync) has no result line.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bfcl_eval.constants.default_prompts import (
    MEMORY_AGENT_SETTINGS,
    MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL,
    MEMORY_BACKEND_INSTRUCTION_UNIFIED,
)

from benchmarks.bfcl.answer import export_answer
from benchmarks.bfcl.export import ResultRecord
from benchmarks.bfcl.memory import MemoryEntry, backend_of, memory_state
from benchmarks.bfcl.multi_turn import turn_trace
from benchmarks.bfcl.real_tools import BfclRealTools
from gats import GatsConfig
from gats.turns import ConversationTurn, GeckoStateSync, RealTurnSetup, TurnAgents, run_conversation
from inference.agents import AgentRun
from inference.gecko import GeckoClient, GeckoError, GeckoSandbox, fetch_catalog
from inference.tools import RealToolsBackend

TurnAgentsFor = Callable[[MemoryEntry], TurnAgents]
"""The per-turn agents (simulated attempts, real run) of one entry."""


@dataclass(frozen=True)
class PlayedEntry:
    """What the agent did in one entry."""

    entry: MemoryEntry
    steps: tuple[tuple[Any, ...], ...] | None
    """Per turn, one exported text per agent step; None when the entry is untested."""
    usage: tuple[dict[str, Any], ...] = ()
    latency: tuple[float, ...] = ()
    """Seconds per turn."""
    error: str | None = None
    trace: tuple[dict[str, Any], ...] = field(default=())
    """Per turn: the calls with their real results, and the final text."""

    def record(self) -> ResultRecord:
        """The entry's result line (one list of step texts per turn; tokens and latency per turn)."""
        assert self.steps is not None, "an untested entry has no result line"
        turns = range(len(self.steps))

        def tokens(key: str, turn: int) -> int:
            return sum(int(u.get(key) or 0) for u in self.usage if u.get("turn") == turn)

        return ResultRecord(id=self.entry.id, result=[list(turn) for turn in self.steps],
                            input_token_count=[[tokens("input_tokens", t)] for t in turns],
                            output_token_count=[[tokens("output_tokens", t)] for t in turns],
                            latency=[[round(t, 6)] for t in self.latency])


def memory_tools(entry: MemoryEntry, snapshot_root: Path) -> BfclRealTools:
    """A fresh instance of the entry's memory class, loaded by its own snapshot code: empty for a scenario's first
    prerequisite, else the scenario's latest snapshot under `snapshot_root` (the official `model_result_dir`)."""
    config = {entry.memory_class: {"model_result_dir": snapshot_root, "scenario": entry.scenario,
                                   "test_id": entry.id, "test_category": entry.category}}
    return BfclRealTools([entry.memory_class], config)


def system_prompt(entry: MemoryEntry, instance: Any) -> str:
    """The official memory instruction: the scenario's setting and the core memory's content (all of the memory for
    `rec_sum`)."""
    template = MEMORY_BACKEND_INSTRUCTION_UNIFIED if backend_of(entry.category) == "rec_sum" \
        else MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL
    return template.format(scenario_setting=MEMORY_AGENT_SETTINGS[entry.scenario],
                           memory_content=instance._dump_core_memory_to_context())


def with_system_prompt(turns: Sequence[Sequence[Mapping[str, Any]]], prompt: str) -> list[list[dict[str, Any]]]:
    """The entry's turns with the memory instruction first: prepended to a leading system message (a question's
    answer format), else as a new one, as the official runner does."""
    out = [[dict(m) for m in turn] for turn in turns]
    first = out[0]
    if first and first[0]["role"] == "system":
        first[0]["content"] = prompt + "\n\n" + first[0]["content"]
    else:
        first.insert(0, {"role": "system", "content": prompt})
    return out


def _step_texts(run: AgentRun) -> list[Any]:
    texts: list[Any] = []
    for step in run.steps:
        if step.calls:
            texts.append(export_answer(step.calls))
        elif step.text:
            texts.append(step.text)
    return texts


@dataclass(frozen=True)
class Rehearsal:
    """Where and how the GATS rehearsals of an entry run."""

    client: GeckoClient
    config: GatsConfig
    labels: Mapping[str, str] = field(default_factory=dict)


def conversation(entry: MemoryEntry, turns: Sequence[Sequence[Mapping[str, Any]]]) -> list[ConversationTurn]:
    """The entry's user turns, each with its messages (the memory instruction first)."""
    return [ConversationTurn("\n".join(str(m["content"]) for m in turn if m["role"] == "user"),
                             tuple(dict(m) for m in turn)) for turn in turns]


def _untested(entry: MemoryEntry, error: str, trace: Sequence[dict[str, Any]] = ()) -> PlayedEntry:
    return PlayedEntry(entry, None, error=error, trace=tuple(trace))


async def play_entry(entry: MemoryEntry, agents: TurnAgentsFor, snapshot_root: Path,
                     rehearsal: Rehearsal) -> PlayedEntry:
    """Play one entry (see the module docstring); a prerequisite's memory is flushed to its snapshot at the end.

    The memory class is loaded in a thread: `MemoryAPI_vector` embeds every stored text when it loads a snapshot
    (0.3 s for 50 texts), which on the event loop stalls the other tasks' Gecko connections until the server drops
    them as idle."""
    tools = await asyncio.to_thread(memory_tools, entry, snapshot_root)
    instance = tools.instances[entry.memory_class]
    state = memory_state(instance)
    turns = with_system_prompt(entry.turns, system_prompt(entry, instance))
    client = rehearsal.client
    try:
        session = await client.create_session({"toolkits": [entry.memory_class],
                                               "labels": {**rehearsal.labels, "task": entry.id}})
    except GeckoError as exc:
        return _untested(entry, f"Gecko: session: {exc}")
    sandbox = GeckoSandbox(client)
    try:
        await client.init_session_state(session.session_id, {entry.memory_class: state}, [entry.memory_class])
        catalog = await fetch_catalog(client, [entry.memory_class])
        setup = RealTurnSetup(agents=agents(entry), sandbox=sandbox, catalog=catalog,
                              real_backend=RealToolsBackend(tools), sync=GeckoStateSync(client),
                              config=rehearsal.config, context=(json.dumps(state),))
        result = await run_conversation(conversation(entry, turns), session.session_id, setup)
    except GeckoError as exc:
        return _untested(entry, f"Gecko: seeding: {exc}")
    finally:
        if not rehearsal.config.keep_sessions:
            await sandbox.delete(session.session_id)
    trace = [turn_trace(turn) for turn in result.turns]
    if result.status == "untested":
        return _untested(entry, result.error or "untested", trace)
    if entry.is_prereq:
        instance._flush_memory_to_local_file()  # type: ignore[attr-defined]  # bfcl-eval's MemoryAPI
    usage = [{**record, "turn": turn.index} for turn in result.turns
             for record in (*turn.simulated.usage, *(turn.real.usage if turn.real else ()))]
    return PlayedEntry(entry, tuple(tuple(_step_texts(turn.real)) if turn.real else () for turn in result.turns),
                       tuple(usage), tuple(turn.latency_s for turn in result.turns), None, tuple(trace))


async def play_prereqs(chain: Sequence[MemoryEntry], agents: TurnAgentsFor, snapshot_root: Path,
                       rehearsal: Rehearsal) -> list[PlayedEntry]:
    """A scenario's prerequisite conversations, in order, each starting from the memory the previous one left; stops
    at the first untested one (the rest would start from a memory that is not the run's)."""
    played: list[PlayedEntry] = []
    for entry in chain:
        played.append(await play_entry(entry, agents, snapshot_root, rehearsal))
        if played[-1].steps is None:
            break
    return played
