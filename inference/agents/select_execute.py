"""Select-then-execute: an open-world agent that searches the pool for its tools, then plans and calls them.

```
first run of a task: search the pool with the user's request        → the found tools become callable
repeat up to max_steps:
    reply = model.complete(messages, [search_tools] + found tools)    (the offered set grows as tools are found)
    search_tools calls → searched by the agent (Gecko's /tools/search); the hits are the tool message
    other calls        → executed through the run's executor (Gecko), in order
    no call            → the reply is the answer
```

`ScriptedSelectExecuteAgent` is its offline counterpart: it searches with the request, then follows a script (a
task's reference calls) — but it can call only tools its searches found, searching by a tool's name when the first
search missed it; a call an injected fault failed is retried once. `tool_loop` is shared with the planner–actor.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inference.agents.base import (
    AgentError,
    AgentInfrastructureError,
    AgentRequest,
    AgentRun,
    AgentStep,
    StopReason,
)
from inference.agents.discovery import (
    DEFAULT_SEARCH_K,
    SEARCH_TOOL_NAME,
    Discovery,
    ToolSearch,
    ToolSearchError,
    search_results_text,
    search_tool_definition,
)
from inference.agents.llm import PlannerModel
from inference.tools.execution import (
    CallRecord,
    ToolCallRequest,
    ToolExecutor,
    ToolInfrastructureError,
    history_arguments,
)
from utils.faults import BLOCKING_KINDS
from utils.llm import Prompt, load_prompt

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
SELECT_EXECUTE_NAME = "select-execute"
SCRIPTED_SELECT_EXECUTE_NAME = "scripted-select-execute"
DEFAULT_OPEN_WORLD_STEPS = 20
DONE_TEXT = "Done."
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def load_open_world_prompt(name: str) -> Prompt:
    """One of this package's open-world prompts (`select_execute_system`, `planner_actor_plan`, …)."""
    return load_prompt(PROMPTS_DIR / f"{name}.md")


def user_request(request: AgentRequest) -> str:
    """The text of the conversation's last user message."""
    for message in reversed(request.messages):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def name_query(name: str) -> str:
    """A search query from a tool's name: `get_reservation_details` → `get reservation details`."""
    return " ".join(w.lower() for w in _WORD.findall(name))


def injected_error(record: CallRecord) -> bool:
    """A call an injected fault failed (a 429, 503, time-out …): retrying the same call may succeed."""
    fault = record.outcome.fault
    return not record.outcome.ok and fault is not None and str(fault.get("kind")) in BLOCKING_KINDS


@dataclass
class RunLog:
    """What a run did so far (steps, usage, transcript), so a failure can carry the partial run."""

    agent: str
    started: float = field(default_factory=time.perf_counter)
    steps: list[AgentStep] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0

    def run(self, final_text: str | None, stop: StopReason) -> AgentRun:
        """The run as it stands."""
        return AgentRun(self.agent, tuple(self.steps), final_text, stop, tuple(self.usage),
                        time.perf_counter() - self.started, tuple(self.transcript))

    def add_step(self, text: str | None, records: Sequence[CallRecord]) -> int:
        """Append a step; return its index."""
        index = len(self.steps)
        self.steps.append(AgentStep(index, text, tuple(records)))
        self.calls += len(records)
        return index


async def search_into(discovery: Discovery, search: ToolSearch, tools: ToolExecutor, query: str,
                      k: int = DEFAULT_SEARCH_K) -> str:
    """Search, make the hits known, and return what the model reads.

    Raises:
        AgentInfrastructureError: The search service failed.
    """
    try:
        hits = await search.search(query, k)
    except ToolSearchError as exc:
        raise AgentInfrastructureError(str(exc)) from exc
    discovery.add(query, hits, tools.catalog)
    return search_results_text(hits, discovery)


def _search_arguments(raw: str | Mapping[str, Any]) -> tuple[str, int]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except ValueError:
        return "", DEFAULT_SEARCH_K
    if not isinstance(value, dict):
        return "", DEFAULT_SEARCH_K
    k = value.get("k")
    return str(value.get("query") or ""), min(max(k, 1), 20) if isinstance(k, int) else DEFAULT_SEARCH_K


@dataclass(frozen=True)
class LoopEnd:
    """How a tool loop ended."""

    final_text: str | None
    stop: StopReason
    records: tuple[CallRecord, ...]
    """The loop's tool calls (searches excluded)."""


async def tool_loop(model: PlannerModel, messages: list[dict[str, Any]], discovery: Discovery, search: ToolSearch,
                    tools: ToolExecutor, log: RunLog, *, max_steps: int, max_calls: int | None = None) -> LoopEnd:
    """The function-calling loop with `search_tools` and the found tools; appends to `messages` and `log`.

    Raises:
        AgentInfrastructureError: The model, the search or a tool backend failed.
        AgentRequestError: The provider refused a request.
    """
    records_all: list[CallRecord] = []
    final_text: str | None = None
    for _ in range(max_steps):
        if max_calls is not None and log.calls >= max_calls:
            return LoopEnd(final_text, "max_steps", tuple(records_all))
        reply = await model.complete(messages, [search_tool_definition(), *discovery.offered()])
        log.usage.extend(reply.usage)
        if not reply.tool_calls:
            messages.append({"role": "assistant", "content": reply.text})
            log.add_step(reply.text, ())
            return LoopEnd(reply.text, "answer", tuple(records_all))
        records: list[CallRecord] = []
        replies: list[tuple[str, str]] = []
        history: list[dict[str, Any]] = []
        step = len(log.steps)
        try:
            for call in reply.tool_calls:
                if call.name == SEARCH_TOOL_NAME:
                    query, k = _search_arguments(call.arguments)
                    text = await search_into(discovery, search, tools, query, k) if query.strip() else \
                        "Give `query`: what the tool should do, in words."
                    arguments = json.dumps({"query": query, "k": k})
                else:
                    record = await tools.execute(call, step)
                    records.append(record)
                    text, arguments = record.outcome.content, history_arguments(record)
                replies.append((call.id, text))
                history.append({"id": call.id, "type": "function",
                                "function": {"name": call.name, "arguments": arguments}})
        except ToolInfrastructureError as exc:
            log.add_step(reply.text, records)
            raise AgentInfrastructureError(f"tool backend failed: {exc}") from exc
        log.add_step(reply.text, records)
        records_all.extend(records)
        messages.append({"role": "assistant", "content": reply.text, "tool_calls": history})
        messages.extend({"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in replies)
        final_text = reply.text
    return LoopEnd(final_text, "max_steps", tuple(records_all))


class SelectExecuteAgent:
    """The LLM select-then-execute agent (one instance per task: it remembers the tools found).

    Args:
        model: The chat model.
        search: The pool's search.
        system_prompt: Placed first (default: `prompts/select_execute_system.md`).
        max_steps: Most assistant messages per run.
        max_calls: The task's call budget (None: no limit).
        first_k: Tools the first search makes known.
    """

    def __init__(self, model: PlannerModel, search: ToolSearch, *, system_prompt: Prompt | None = None,
                 max_steps: int = DEFAULT_OPEN_WORLD_STEPS, max_calls: int | None = None,
                 first_k: int = DEFAULT_SEARCH_K) -> None:
        self.model = model
        self.name = f"{SELECT_EXECUTE_NAME}:{model.name}"
        self.search = search
        self.system_prompt = system_prompt or load_open_world_prompt("select_execute_system")
        self.max_steps = max_steps
        self.max_calls = max_calls
        self.first_k = first_k
        self.discovery = Discovery()

    def describe(self) -> dict[str, Any]:
        """The searches made and the tools found (for traces)."""
        return {"discovery": self.discovery.public()}

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Search with the request (first run), then the function-calling loop.

        Raises:
            AgentInfrastructureError: The model, the search or a tool backend failed.
            AgentRequestError: The provider refused a request.
        """
        log = RunLog(self.name)
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt.text},
                                          *(dict(m) for m in request.messages)]
        if request.feedback is not None:
            messages.append({"role": "user", "content": request.feedback.text})
        log.transcript = messages
        try:
            if not self.discovery.searches:
                await search_into(self.discovery, self.search, tools, user_request(request), self.first_k)
            end = await tool_loop(self.model, messages, self.discovery, self.search, tools, log,
                                  max_steps=self.max_steps, max_calls=self.max_calls)
        except AgentError as exc:
            exc.partial = log.run(None, "max_steps")
            raise
        return log.run(end.final_text, end.stop)


@dataclass(frozen=True)
class ScriptStep:
    """One call of a script: a tool of a pool toolkit, by its operationId."""

    toolkit: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


async def find_tool(discovery: Discovery, search: ToolSearch, tools: ToolExecutor, step: ScriptStep,
                    k: int = DEFAULT_SEARCH_K) -> str | None:
    """The agent name of a script step's tool, searching by its name, then by its name and toolkit, if no search
    found it yet (None: not found).

    Raises:
        AgentInfrastructureError: The search service failed.
    """
    for query in (name_query(step.tool), f"{name_query(step.tool)} {name_query(step.toolkit)}"):
        spec = discovery.find(step.toolkit, step.tool)
        if spec is not None:
            return spec.agent_name
        await search_into(discovery, search, tools, query, k)
    spec = discovery.find(step.toolkit, step.tool)
    return spec.agent_name if spec is not None else None


class ScriptedSelectExecuteAgent:
    """Offline select-then-execute: search with the request, then follow the script with the tools found.

    Args:
        script: The calls to make (a task's reference), in order.
        search: The pool's search.
        max_calls: The task's call budget.
        retries: Identical retries of a call an injected fault failed.
    """

    name = SCRIPTED_SELECT_EXECUTE_NAME

    def __init__(self, script: Sequence[ScriptStep], search: ToolSearch, *, max_calls: int | None = None,
                 retries: int = 1) -> None:
        self.script = tuple(script)
        self.search = search
        self.max_calls = max_calls
        self.retries = retries
        self.discovery = Discovery()
        self.missing: list[str] = []

    def describe(self) -> dict[str, Any]:
        """The searches made, the tools found, and the script's tools no search found."""
        return {"discovery": self.discovery.public(), "missing": self.missing}

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Search, then make the script's calls one step each; answer `Done.`.

        Raises:
            AgentInfrastructureError: The search or a tool backend failed.
        """
        log = RunLog(self.name)
        self.missing = []
        try:
            if not self.discovery.searches:
                await search_into(self.discovery, self.search, tools, user_request(request))
            for index, step in enumerate(self.script):
                name = await find_tool(self.discovery, self.search, tools, step)
                if name is None:
                    self.missing.append(f"{step.toolkit}/{step.tool}")
                    continue
                for attempt in range(self.retries + 1):
                    if self.max_calls is not None and log.calls >= self.max_calls:
                        return log.run(DONE_TEXT, "max_steps")
                    call = ToolCallRequest(f"scripted_{index}_{attempt}", name, dict(step.arguments))
                    record = await tools.execute(call, len(log.steps))
                    log.add_step(None, (record,))
                    if not injected_error(record):
                        break
        except ToolInfrastructureError as exc:
            raise AgentInfrastructureError(f"tool backend failed: {exc}", log.run(None, "max_steps")) from exc
        except AgentError as exc:
            exc.partial = log.run(None, "max_steps")
            raise
        log.add_step(DONE_TEXT, ())
        return log.run(DONE_TEXT, "answer")
