"""One tool-call path for every agent: name resolution, argument parsing, execution on a backend, records.

```
agent's call (name, JSON text) ─► ToolExecutor ─► catalog.resolve(name) ─► parse arguments ─► backend.execute
                                        │ unknown name / not a JSON object: an error result, never sent
                                        ▼
                                   CallRecord (what the agent asked, what it saw, how long it took)
```

Backends: `inference.gecko.GeckoToolBackend` (simulated, one Gecko session) and `RealToolsBackend` (the real
tools of one task, `inference.tools.real.RealTools`). Errors the agent can act on (422 validation errors,
unknown tools, malformed arguments, tool errors) come back as results; infrastructure failures raise.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from inference.tools.catalog import CatalogTool, ToolCatalog
from utils.jsonutil import dumps_compact

ErrorKind = Literal["invalid_arguments", "unknown_tool", "malformed_arguments", "tool_error", "rejected",
                    "service_error"]
"""Why a call failed: schema/semantic validation (422), a name not in the catalog, arguments that are not a
JSON object, an error reported by a real tool, another refusal of the request (4xx), or the service failing
the call (a time-out, 429, 503, 5xx, an expired session: retrying may succeed)."""


@dataclass(frozen=True)
class ToolError:
    """One problem with a call, as Gecko reports it (`errors[]` of a 422) or as the executor found it."""

    message: str
    pointer: str = ""
    """JSON pointer of the argument concerned (`/base`, `/new_preferences/size`); "" for the whole call."""
    keyword: str = ""
    """JSON Schema keyword (`type`, `required`, `enum`, `additionalProperties`, …) or `semantic`."""
    source: str = ""
    """`syntactic`, `semantic` or `client`."""

    def public(self) -> dict[str, str]:
        """JSON form."""
        return {"pointer": self.pointer, "keyword": self.keyword, "message": self.message, "source": self.source}


@dataclass(frozen=True)
class ToolOutcome:
    """What a call returned, and what the agent is shown."""

    ok: bool
    content: str
    """The tool message the agent sees (JSON text)."""
    body: Any = None
    """The result value (a Gecko response body, or a real tool's rendered result)."""
    status: int | None = None
    """HTTP status for Gecko calls; None for real tools and for calls refused before any backend."""
    error_kind: ErrorKind | None = None
    errors: tuple[ToolError, ...] = ()
    reached_backend: bool = True
    """False when the executor refused the call itself (unknown tool, malformed arguments): no backend,
    and so no Gecko judge, ever saw it."""
    fault: Mapping[str, Any] | None = None
    """The state controller's record when it intervened (`utils.faults.Injection.public()`); never shown to
    the agent, but kept in traces so reports and GATS can tell an injected failure from a real one."""

    @property
    def blocked_by_fault(self) -> bool:
        """An injected fault answered instead of the tool: the call did not run (a stale read included)."""
        return self.fault is not None and not self.fault.get("executed", True)


@dataclass(frozen=True)
class ToolCallRequest:
    """A call as the agent made it."""

    id: str
    name: str
    """The agent's name for the tool (possibly one that does not exist)."""
    arguments: str | Mapping[str, Any]
    """Raw JSON text of the arguments (LLMs) or an already built mapping (scripted agents)."""


@dataclass(frozen=True)
class CallRecord:
    """One executed (or refused) call of an attempt."""

    call_id: str
    step: int
    """Index of the agent step (assistant message) that made the call."""
    agent_name: str
    raw_arguments: str
    """The arguments as the agent sent them (JSON text)."""
    arguments: dict[str, Any] | None
    """Parsed arguments; None when they were not a JSON object."""
    tool: CatalogTool | None
    """The resolved tool; None for a name that is not in the catalog."""
    outcome: ToolOutcome
    latency_s: float

    @property
    def name(self) -> str:
        """The tool's original name when resolved (`math.factorial`), else the name the agent used."""
        return self.tool.original_name if self.tool is not None else self.agent_name

    def public(self) -> dict[str, Any]:
        """JSON form for traces."""
        return {
            "id": self.call_id, "step": self.step, "name": self.name, "agent_name": self.agent_name,
            "toolkit": self.tool.toolkit if self.tool else None, "arguments": self.arguments,
            "raw_arguments": self.raw_arguments if self.arguments is None else None,
            "ok": self.outcome.ok, "status": self.outcome.status, "error_kind": self.outcome.error_kind,
            "errors": [e.public() for e in self.outcome.errors], "result": self.outcome.content,
            "latency_s": round(self.latency_s, 6),
            **({"fault": dict(self.outcome.fault)} if self.outcome.fault is not None else {}),
        }


class ToolInfrastructureError(Exception):
    """A backend could not execute a call for reasons outside the agent's control (service down, session
    gone). The attempt that hit it is not the agent's failure: it is "untested"."""


class ToolBackend(Protocol):
    """Executes resolved calls: a simulated (Gecko) or real environment."""

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        """Run one call. Errors the agent can act on are outcomes. `message`: an id of the model message that
        issued the call, the same for every call of one message (a simulated backend passes it to Gecko, whose
        judge then reads identical calls of one message as parallel calls, not repeats).

        Raises:
            ToolInfrastructureError: The backend failed (not the call).
        """
        ...


def error_content(title: str, detail: str, errors: tuple[ToolError, ...] = ()) -> str:
    """The tool-message text of a failed call: `{"error", "detail", "errors"?}` as compact JSON."""
    payload: dict[str, Any] = {"error": title, "detail": detail}
    if errors:
        payload["errors"] = [{"pointer": e.pointer, "keyword": e.keyword, "message": e.message} for e in errors]
    return dumps_compact(payload)


SHOWN_ARGUMENT_CHARS = 300
"""Of malformed arguments, this much is quoted back to the model in the call's result."""


def _parse_arguments(raw: str | Mapping[str, Any]) -> tuple[str, dict[str, Any] | None, str]:
    """(raw text, parsed object or None, problem)."""
    if isinstance(raw, Mapping):
        return dumps_compact(dict(raw)), dict(raw), ""
    text = raw if raw.strip() else "{}"
    shown = raw if len(raw) <= SHOWN_ARGUMENT_CHARS else raw[:SHOWN_ARGUMENT_CHARS] + "…"
    try:
        value = json.loads(text)
    except ValueError as exc:
        return raw, None, f"the arguments are not valid JSON ({exc}); you sent: {shown}"
    if not isinstance(value, dict):
        return raw, None, f"the arguments must be a JSON object, got {type(value).__name__}: {shown}"
    return raw, value, ""


def history_arguments(record: CallRecord) -> str:
    """The arguments of a call as the model's history shows them: always a JSON object. Malformed arguments
    (text that is not a JSON object, e.g. a call cut off at the output cap: `{`) become `{}`, and the parse
    error is in the call's result: providers refuse a history with arguments that do not parse (llama.cpp
    answers 500), which would end the task as untested."""
    return record.raw_arguments if record.arguments is not None else "{}"


def assistant_message(text: str | None, calls: Sequence[CallRecord]) -> dict[str, Any]:
    """One assistant step for the model's history: its text and its calls, each with valid JSON arguments
    (`history_arguments`); the results follow as one tool message per call."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": c.call_id, "type": "function", "function": {"name": c.agent_name, "arguments": history_arguments(c)}}
            for c in calls
        ]
    return message


def tool_messages(calls: Sequence[CallRecord]) -> list[dict[str, Any]]:
    """The tool message of each call: what it returned, or why it failed."""
    return [{"role": "tool", "tool_call_id": c.call_id, "content": c.outcome.content} for c in calls]


class ToolExecutor:
    """Resolves and executes the calls of one agent run on one backend.

    Args:
        catalog: The tools the agent was offered.
        backend: Where resolved calls run.
    """

    def __init__(self, catalog: ToolCatalog, backend: ToolBackend) -> None:
        self.catalog = catalog
        self.backend = backend
        self._run_id = secrets.token_hex(4)  # message ids of this run: `<run id>.<step>`

    async def execute(self, request: ToolCallRequest, step: int = 0) -> CallRecord:
        """Execute one call; names outside the catalog and malformed arguments never reach the backend.

        Raises:
            ToolInfrastructureError: The backend failed.
        """
        started = time.perf_counter()
        raw, arguments, problem = _parse_arguments(request.arguments)
        tool = self.catalog.resolve(request.name)
        if tool is None:
            hints = self.catalog.suggestions(request.name)
            detail = f"there is no tool named {request.name!r}" + (
                f"; did you mean: {', '.join(hints)}" if hints else
                f"; available tools: {', '.join(list(self.catalog.by_agent_name)[:20])}")
            error = ToolError(detail, keyword="unknown-tool", source="client")
            outcome = ToolOutcome(False, error_content("Unknown tool", detail), status=None,
                                  error_kind="unknown_tool", errors=(error,), reached_backend=False)
        elif arguments is None:
            error = ToolError(problem, keyword="json", source="client")
            outcome = ToolOutcome(False, error_content("Malformed arguments", problem), status=None,
                                  error_kind="malformed_arguments", errors=(error,), reached_backend=False)
        else:
            outcome = await self.backend.execute(tool, arguments, f"{self._run_id}.{step}")
        return CallRecord(request.id, step, request.name, raw, arguments, tool, outcome,
                          time.perf_counter() - started)

