"""Replay one sample in a fresh Gecko session and give its verdict.

Per sample: the tools are converted (`gecko.convert`) into an ephemeral toolkit (each distinct tool
definition converted and compiled once, kept in an LRU), a session is created in an in-process memory store, every
call runs through the server's own `CallRunner` (syntactic check, semantic check when a model is
configured, response synthesis, state update), the judge gives its verdict on the whole sample, and the
session is deleted. A dataset that records a tool result keeps it: the output shows the recorded
response, not the simulated one.

Verdicts, worst first (a sample gets the first that applies):

| verdict         | meaning                                                                             |
|-----------------|-------------------------------------------------------------------------------------|
| `malformed`     | the line is not a sample of its format, or its tools cannot be converted             |
| `untested`      | an infrastructure failure (LLM timeout, provider error, a semantic check that did not answer): nothing is claimed |
| `invalid_call`  | at least one call was rejected: unknown tool, arguments not JSON, schema or semantic |
| `task_failed`   | every call is valid, but the judge says the calls do not accomplish the request     |
| `valid`         | every call is valid and the judge says the request is accomplished                  |
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any, Literal

from gecko.convert import ConversionError, from_bfcl, from_openai, from_xlam
from gecko.convert.bfcl import bfcl_functions
from gecko.convert.openai_tools import openai_functions
from gecko.convert.xlam import xlam_functions
from gecko.pipeline.runner import CallRunner, compact_call
from gecko.pipeline.stages import Engines, JudgeFailure, JudgeInput
from gecko.pipeline.validate.syntactic import validate_arguments
from gecko.sessions.memory import MemoryStore
from gecko.sessions.model import SessionRecord, new_session_id
from gecko.sessions.versions import Retention
from gecko.toolkits.loader import ToolkitLoadError, build_toolkit
from gecko.toolkits.model import Operation, Toolkit
from gecko.verify.samples import NO_RESULT, Sample, ToolCall
from utils.httpstatus import is_success
from utils.llm.errors import LLMError

Verdict = Literal["malformed", "untested", "invalid_call", "task_failed", "valid"]
VERDICTS: tuple[Verdict, ...] = ("malformed", "untested", "invalid_call", "task_failed", "valid")
TOOL_CACHE_SIZE = 4096
"""Distinct tool definitions kept compiled per process (datasets reuse tools across many samples)."""
TOOLKIT_NAME = "sample"
_CONVERTERS = {"openai": from_openai, "xlam": from_xlam, "bfcl": from_bfcl}
_SPLITTERS = {"openai": openai_functions, "xlam": xlam_functions, "bfcl": bfcl_functions}


class Verifier:
    """Replays samples; one per process (it owns a memory store and a toolkit cache)."""

    def __init__(self, engines: Engines) -> None:
        self.engines = engines
        self.store = MemoryStore(Retention(ttl=3600.0, history_limit=0, max_versions=1))
        self.runner = CallRunner(self.store, engines)
        self._tools: OrderedDict[bytes, Operation | None] = OrderedDict()

    def operations(self, sample: Sample) -> dict[str, Operation]:
        """The sample's tools by original name: each tool converted and compiled once, then cached by content.

        Raises:
            ConversionError: the tools cannot be converted or compiled.
        """
        fmt = str(sample.format)
        functions = _SPLITTERS[fmt](sample.tools or [])
        keys = [hashlib.sha256(f"{fmt}\0{json.dumps(f, sort_keys=True, default=str)}".encode()).digest()
                for f in functions]
        missing = {key: function for key, function in zip(keys, functions, strict=True) if key not in self._tools}
        if missing:
            built = self._build(fmt, list(missing.values()))
            for key, function in missing.items():
                self._tools[key] = built.get(str(function.get("name")))
                if len(self._tools) > TOOL_CACHE_SIZE:
                    self._tools.popitem(last=False)
        operations: dict[str, Operation] = {}
        for key in keys:
            operation = self._tools.get(key)
            if operation is not None:
                self._tools.move_to_end(key)
                operations.setdefault(operation.original_name, operation)
        return operations

    @staticmethod
    def _build(fmt: str, functions: list[dict[str, Any]]) -> dict[str, Operation]:
        doc = _CONVERTERS[fmt](functions, title=TOOLKIT_NAME, validate=False)
        try:
            toolkit: Toolkit = build_toolkit(Path(f"{TOOLKIT_NAME}.json"), doc)
        except (ToolkitLoadError, ValueError) as exc:
            raise ConversionError(f"the converted tools do not compile: {exc}") from None
        return {op.original_name: op for op in toolkit.operations.values()}

    async def verify(self, sample: Sample) -> dict[str, Any]:
        """The result line of one sample: id, format, verdict, reason, per-call outcomes, judge items."""
        result: dict[str, Any] = {"id": sample.id, "format": sample.format}
        if sample.problem:
            return {**result, "verdict": "malformed", "reason": sample.problem, "calls": []}
        try:
            operations = self.operations(sample)
        except (ConversionError, TypeError, ValueError, AttributeError, KeyError) as exc:
            return {**result, "verdict": "malformed", "reason": f"tools: {exc}", "calls": []}
        session_id = new_session_id()
        await self.store.create(SessionRecord(id=session_id))
        try:
            calls = [await self._replay(session_id, operations, call) for call in sample.calls]
            return {**result, **await self._judge(sample, session_id, calls, operations), "calls": calls}
        except LLMError as exc:
            return {**result, "verdict": "untested", "reason": f"{type(exc).__name__}: {exc}", "calls": []}
        finally:
            await self.store.delete(session_id)

    async def _replay(self, session_id: str, operations: dict[str, Operation], call: ToolCall) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": call.name, "arguments": call.arguments}
        operation = operations.get(call.name)
        if operation is None:
            known = ", ".join(sorted(operations)) or "none"
            return {**out, "status": "invalid", "errors": [
                {"keyword": "unknown_tool", "pointer": "", "message": f"Unknown tool {call.name!r}; known: {known}."}]}
        if call.arguments_error:
            return {**out, "status": "invalid",
                    "errors": [{"keyword": "arguments_json", "pointer": "", "message": call.arguments_error}]}
        arguments = _first_valid(operation, call)
        out["arguments"] = arguments
        outcome = await self.runner.run(session_id, operation, arguments)
        if not is_success(outcome.status):
            return {**out, "status": "invalid", "errors": outcome.errors(), "semantic": outcome.semantic_outcome}
        recorded = call.result is not NO_RESULT
        return {**out, "status": "valid", "semantic": outcome.semantic_outcome,
                "response": call.result if recorded else outcome.body,
                "response_source": "recorded" if recorded else "simulated"}

    async def _judge(self, sample: Sample, session_id: str, calls: list[dict[str, Any]],
                     operations: dict[str, Operation]) -> dict[str, Any]:
        rejected = [c for c in calls if c["status"] != "valid"]
        if rejected:
            kinds = sorted({e["keyword"] for c in rejected for e in c["errors"]})
            names = sorted({c["tool"] for c in rejected})
            return {"verdict": "invalid_call",
                    "reason": f"{len(rejected)} of {len(calls)} call(s) rejected ({', '.join(names)}): {', '.join(kinds)}"}
        unchecked = sorted({c["tool"] for c in calls if c.get("semantic") == "unchecked"})
        if unchecked:  # the semantic check failed (timeout, provider error): claim nothing
            return {"verdict": "untested", "reason": f"the semantic check did not answer for {', '.join(unchecked)}"}
        judge = self.engines.judge
        usage: list[dict[str, Any]] = []
        record = await self.store.get(session_id)
        history = [compact_call(e) for e in await self.store.history(session_id, len(calls) + 1, 0)]
        tools = [{"name": op.original_name, "description": op.description, "access": op.access,
                  "arguments_schema": op.args_schema} for op in operations.values()]
        try:
            items = await judge.checklist(sample.task, [], tools, usage)
            verdict = await judge.judge(JudgeInput(
                task=sample.task, checklist=items, state=record.state if record else {}, calls=history,
                agent_response=sample.answer, tools=tools, usage=usage,
                call_messages=[c.message for c in sample.calls]))
        except JudgeFailure as exc:
            return {"verdict": "untested", "reason": f"judge failed: {exc}"}
        judged = {"success": verdict.success, "engine": verdict.engine,
                  "items": [{"id": i.id, "status": i.status, "reasoning": i.reasoning} for i in verdict.items]}
        if verdict.success:
            reason = verdict.items[0].reasoning if len(verdict.items) == 1 else "every checklist item is met"
            return {"verdict": "valid", "reason": reason, "judge": judged}
        failed = [f"{i.description}: {i.reasoning}" if i.reasoning else i.description
                  for i in verdict.items if i.status != "success"]
        return {"verdict": "task_failed", "reason": "; ".join(failed) or "the judge found the task not done",
                "judge": judged}


def _first_valid(operation: Operation, call: ToolCall) -> Any:
    """The call's arguments, or the first alternative set that passes the syntactic check if they do not."""
    if not call.alternatives or not validate_arguments(operation, call.arguments):
        return call.arguments
    return next((a for a in call.alternatives if not validate_arguments(operation, a)), call.arguments)
