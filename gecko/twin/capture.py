"""Captured calls of a real MCP server: what was sent and what it answered, one JSON object a line.

Two sources:

- `capture_calls`: replay a call file on a real server started over stdio with the official MCP SDK client
  (`gecko twin capture --server CMD --calls FILE`). A call file is JSON Lines of `{"tool": NAME, "arguments": {…}}`;
  an argument string `"{{N.path}}"` is replaced by the value at `path` (dots, list indexes as numbers) of the result
  of call N (0-based), so a call can address what an earlier call created (`{"task_id": "{{0.task_id}}"}`);
- `from_history`: the real calls of a Gecko session in `hybrid` or `passthrough` mode (its history entries whose
  `source` is `upstream`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from gecko.twin.outcome import Outcome, classify, error_body, result_text, result_value

_REFERENCE = re.compile(r"^\{\{(\d+)((?:\.[^.{}]+)*)\}\}$")


class CaptureError(ValueError):
    """A call file or capture that cannot be read, or a server that cannot be driven; the message says which."""


@dataclass(frozen=True)
class Capture:
    """One real call."""

    tool: str
    """The tool's name on the real server."""
    arguments: dict[str, Any]
    outcome: Outcome
    result: Any
    """The result's JSON value (`structuredContent`, else its text parsed as JSON when it is JSON), or the error
    text."""
    is_error: bool = False
    """The server answered `isError: true` (or a JSON-RPC error)."""
    text: str = ""
    """The result's text blocks."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object of one capture line."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Capture:
        """One capture line, checked.

        Raises:
            CaptureError: not a capture.
        """
        if not isinstance(data.get("tool"), str) or not isinstance(data.get("arguments", {}), dict):
            raise CaptureError(f"not a capture (needs 'tool' and object 'arguments'): {str(data)[:120]}")
        outcome = data.get("outcome")
        if outcome not in ("ok", "error", "rejected"):
            raise CaptureError(f"capture of {data['tool']}: 'outcome' must be ok, error or rejected, got {outcome!r}")
        return cls(data["tool"], dict(data.get("arguments") or {}), outcome, data.get("result"),
                   bool(data.get("is_error")), str(data.get("text") or ""))


def capture_of(tool: str, arguments: Mapping[str, Any], result: Mapping[str, Any]) -> Capture:
    """The capture of one call from its MCP result (a `CallToolResult` as JSON, or `{"jsonrpc_error": message}`)."""
    outcome = classify(result)
    if result.get("jsonrpc_error") is not None:
        message = str(result["jsonrpc_error"])
        return Capture(tool, dict(arguments), outcome, message, True, message)
    text = result_text(result)
    value = text if result.get("isError") else result_value(result)
    return Capture(tool, dict(arguments), outcome, value, bool(result.get("isError")), text)


def read_captures(path: Path) -> list[Capture]:
    """The captures of a JSON Lines file.

    Raises:
        CaptureError: a line that is not JSON or not a capture.
    """
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise CaptureError(f"{path}:{number}: not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise CaptureError(f"{path}:{number}: a capture is a JSON object")
        out.append(Capture.from_json(data))
    return out


def write_captures(captures: Iterable[Capture], path: Path) -> None:
    """Write captures as JSON Lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c.to_json(), ensure_ascii=False) + "\n" for c in captures), encoding="utf-8")


def read_calls(path: Path) -> list[dict[str, Any]]:
    """The calls of a call file (JSON Lines, or one JSON list), each `{"tool", "arguments"}`.

    Raises:
        CaptureError: not JSON, or a call without a tool name or with non-object arguments.
    """
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        calls = data if isinstance(data, list) else [data]
    except ValueError:
        try:
            calls = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as exc:
            raise CaptureError(f"{path}: neither JSON nor JSON Lines: {exc}") from None
    for index, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str) \
                or not isinstance(call.get("arguments", {}), dict):
            raise CaptureError(f"{path}: call {index} needs a 'tool' name and object 'arguments': {str(call)[:120]}")
    return calls


def _at(value: Any, path: Sequence[str]) -> Any:
    for part in path:
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return None
    return value


def resolve(arguments: Any, results: Sequence[Any]) -> Any:
    """`arguments` with every `"{{N.path}}"` string replaced by that value of result N (None when it has none)."""
    if isinstance(arguments, dict):
        return {k: resolve(v, results) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [resolve(v, results) for v in arguments]
    if isinstance(arguments, str):
        match = _REFERENCE.match(arguments)
        if match:
            index = int(match.group(1))
            path = [p for p in match.group(2).split(".") if p]
            return _at(results[index], path) if index < len(results) else None
    return arguments


async def capture_calls(argv: Sequence[str], calls: Sequence[Mapping[str, Any]], *, timeout: float = 60.0,
                        env: Mapping[str, str] | None = None, cwd: str | None = None) -> list[Capture]:
    """Start `argv` as an MCP server over stdio, make `calls` in order, and return what it answered.

    Raises:
        CaptureError: the server did not start, broke off, or took longer than `timeout` seconds in all.
    """
    params = StdioServerParameters(command=argv[0], args=list(argv[1:]), env={**os.environ, **(env or {})}, cwd=cwd)

    async def run() -> list[Capture]:
        captures: list[Capture] = []
        results: list[Any] = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for call in calls:
                arguments = resolve(dict(call.get("arguments") or {}), results)
                try:
                    reply = await session.call_tool(call["tool"], arguments)
                    result = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
                except McpError as exc:
                    result = {"jsonrpc_error": exc.error.message}
                capture = capture_of(call["tool"], arguments, result)
                captures.append(capture)
                results.append(capture.result)
        return captures

    try:
        return await asyncio.wait_for(run(), timeout)
    except TimeoutError:
        raise CaptureError(f"MCP server {shlex.join(argv)!r}: the calls took longer than {timeout:.0f}s") from None
    except Exception as exc:  # noqa: BLE001 - start-up and transport failures become one readable message
        raise CaptureError(f"MCP server {shlex.join(argv)!r} failed: {type(exc).__name__}: {exc}") from None


def from_history(entries: Iterable[Mapping[str, Any]], original_names: Mapping[str, str]) -> list[Capture]:
    """The real calls of a session's history (`GET /sessions/{id}/history` → `calls`), as captures.

    Args:
        entries: history entries; only those answered by the upstream (`source: upstream`) are kept.
        original_names: operationId → the tool's name on the real server (`x-gecko-original-name`).
    """
    out = []
    for entry in entries:
        if entry.get("source") != "upstream" or not isinstance(entry.get("tool"), str):
            continue
        operation = entry["tool"].rsplit("/", 1)[-1]
        body = entry.get("response")
        raw = entry.get("arguments")
        arguments: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
        if entry.get("upstream_error"):
            text = body if isinstance(body, str) else json.dumps(body)
            result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
        else:
            text = body if isinstance(body, str) else json.dumps(body)
            result = {"content": [{"type": "text", "text": text}], "isError": False}
            if isinstance(body, dict) and not error_body(body):
                result["structuredContent"] = body
        out.append(capture_of(original_names.get(operation, operation), arguments, result))
    return out


__all__ = ["Capture", "CaptureError", "capture_calls", "capture_of", "from_history", "read_calls", "read_captures",
           "resolve", "write_captures", "result_text"]
