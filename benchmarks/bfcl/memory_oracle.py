"""The scripted oracle of the memory categories: it answers from what the real memory holds, not from the dataset.

- Prerequisite conversation k of n in a scenario, first turn: it writes the gold answer of every question of the
  scenario whose index i has i mod n == k (`kv`: `archival_memory_add(key="answer_<i>", value=…)`; `rec_sum`:
  `memory_append(text="answer_<i>: …\\n")`); later turns make no call.
  `vector`: `archival_memory_add(text="answer_<i>: …\nasked as: <question i>")`, a text with no key.
- Question i: it reads the memory back (`archival_memory_retrieve(key="answer_<i>")` / `memory_retrieve()`; `vector`:
  `archival_memory_retrieve(query=<question i>, top_k=5)`, a nearest-neighbour search of the question's embedding
  among the stored texts') and answers in the official format with the value it read (`I do not know` when the
  memory lacks it, or the search did not bring its text back).

So it scores 1.0 only when every prerequisite ran before its questions on the real memory class, and each snapshot
carried the memory to the next conversation and to the questions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence

from benchmarks.bfcl.memory import MemoryEntry, MemoryTask, backend_of
from benchmarks.bfcl.memory_run import TurnAgentsFor
from gats.turns import TurnAgents
from inference.agents import Agent, AgentRequest, AgentRun
from inference.agents.base import AgentInfrastructureError, AgentStep
from inference.agents.scripted import ORACLE_NAME, ScriptedCall
from inference.tools.execution import CallRecord, ToolCallRequest, ToolExecutor, ToolInfrastructureError

NOTED = "Noted."


def _key(index: int) -> str:
    return f"answer_{index}"


VECTOR_TOP_K = 5
"""Texts the vector oracle's search brings back."""


def question_text(task: MemoryTask) -> str:
    """The question's user text (the vector oracle's search query, stored beside the answer)."""
    return " ".join(str(m["content"]) for turn in task.question.turns for m in turn if m["role"] == "user")


def _write(category: str, index: int, answer: str, question: str) -> ScriptedCall:
    backend = backend_of(category)
    if backend == "rec_sum":
        return ScriptedCall("memory_append", {"text": f"{_key(index)}: {answer}\n"})
    if backend == "vector":
        return ScriptedCall("archival_memory_add", {"text": f"{_key(index)}: {answer}\nasked as: {question}"})
    return ScriptedCall("archival_memory_add", {"key": _key(index), "value": answer})


def _read(category: str, index: int, question: str) -> ScriptedCall:
    backend = backend_of(category)
    if backend == "rec_sum":
        return ScriptedCall("memory_retrieve", {})
    if backend == "vector":
        return ScriptedCall("archival_memory_retrieve", {"query": question, "top_k": VECTOR_TOP_K})
    return ScriptedCall("archival_memory_retrieve", {"key": _key(index)})


def _line_value(text: str, index: int) -> str | None:
    prefix = f"{_key(index)}: "
    return next((line[len(prefix):] for line in text.splitlines() if line.startswith(prefix)), None)


def recalled(category: str, index: int, content: str) -> str | None:
    """The answer stored for question `index`, found in a read call's real result; None when it is not there."""
    try:
        body = json.loads(content)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    backend = backend_of(category)
    if backend == "kv":
        value = body.get("value")
        return value if isinstance(value, str) else None
    if backend == "vector":
        hits = body.get("result")
        if not isinstance(hits, list):
            return None
        return next((v for hit in hits if isinstance(hit, dict)
                     and (v := _line_value(str(hit.get("text", "")), index)) is not None), None)
    return _line_value(str(body.get("memory_content", "")), index)


def answer_text(value: str | None) -> str:
    """The final message in the official answer format."""
    if value is None:
        return repr({"answer": "I do not know", "context": "I do not know"})
    return repr({"answer": value, "context": "read back from my memory"})


class MemoryOracleAgent:
    """Makes its script's calls in one step, then answers: `Noted.` in a prerequisite, the recalled value in a
    question."""

    name = ORACLE_NAME

    def __init__(self, script: Sequence[ScriptedCall], question: tuple[str, int] | None = None) -> None:
        self.script = tuple(script)
        self.question = question
        """(category, index) of the question it answers; None in a prerequisite."""

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Play the script, then answer."""
        started = time.perf_counter()
        records: list[CallRecord] = []
        try:
            for i, call in enumerate(self.script):
                spec = tools.catalog.by_original_name(call.name)
                name = spec.agent_name if spec is not None else call.name
                records.append(await tools.execute(ToolCallRequest(f"oracle_{i}", name, dict(call.arguments)), 0))
        except ToolInfrastructureError as exc:
            raise AgentInfrastructureError(f"tool backend failed: {exc}") from exc
        text = NOTED
        if self.question is not None:
            category, index = self.question
            value = next((v for r in records if (v := recalled(category, index, r.outcome.content)) is not None),
                         None)
            text = answer_text(value)
        steps = ((AgentStep(0, None, tuple(records)),) if records else ()) + (AgentStep(1 if records else 0, text, ()),)
        return AgentRun(self.name, steps, text, "answer", latency_s=time.perf_counter() - started)


def oracle_agents(tasks: Sequence[MemoryTask]) -> TurnAgentsFor:
    """The oracle's agents for each turn of each entry of these tasks' scenarios: the same script in the simulated
    attempts and in the real run (whose answer is what the real memory returned)."""
    answers: dict[tuple[str, str], dict[int, tuple[str, str]]] = {}
    for task in tasks:
        answers.setdefault((task.category, task.scenario), {})[task.question.index] = (task.question.ground_truth[0],
                                                                                      question_text(task))
    chains: Mapping[tuple[str, str], tuple[MemoryEntry, ...]] = {(t.category, t.scenario): t.prereqs for t in tasks}

    def agent_for(entry: MemoryEntry, turn: int) -> Agent:
        key = (entry.category, entry.scenario)
        facts = answers.get(key, {})
        if not entry.is_prereq:
            question = facts.get(entry.index, ("", ""))[1]
            return MemoryOracleAgent([_read(entry.category, entry.index, question)], (entry.category, entry.index))
        chain = chains.get(key, ())
        position = next((k for k, e in enumerate(chain) if e.id == entry.id), 0)
        script = [] if turn else [_write(entry.category, i, a, q) for i, (a, q) in sorted(facts.items())
                                  if i % max(len(chain), 1) == position]
        return MemoryOracleAgent(script)

    return lambda entry: TurnAgents(simulated=lambda turn: agent_for(entry, turn),
                                    real=lambda turn, plan: agent_for(entry, turn))
