"""What one MCP tool result was: a success, the tool's own (application) error, or a refusal of the arguments.

One classifier for captures, learning and the fidelity harness, applied alike to a real server's results and to a
twin's, so both are judged by the same rule:

| outcome | the result |
|---|---|
| `rejected` | a JSON-RPC error, or `isError` whose text is an argument-validation failure (the SDKs' "Invalid arguments" / "Input validation error", zod or pydantic issue lists), or Gecko's 422 problem |
| `error` | any other `isError`, or a success whose body is an error object (`{"error": …}` with nothing but a flag beside it, `{"status": "error", "message": …}`, `{"success": false, …}`, `{"ok": false, …}`) |
| `ok` | the rest |
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

Outcome = Literal["ok", "error", "rejected"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "error", "rejected")
ERROR_STATUSES = frozenset({"error", "failed", "failure", "fail"})
_VALIDATION = re.compile(
    r"invalid arguments|input validation error|validation error|invalid_type|invalid_enum_value|unrecognized_keys"
    r"|too_small|too_big|invalid_union|missing required argument|is a required property|-32602"
    r"|field required|unknown argument", re.IGNORECASE)
"""Texts of argument-validation failures: the MCP SDKs' (TypeScript, Python), zod's and pydantic's issue codes,
jsonschema's and Gecko's own messages."""
GECKO_PROBLEM = "gecko/problem"


def result_text(result: Mapping[str, Any]) -> str:
    """The text blocks of an MCP tool result (as JSON), joined by newlines."""
    blocks = result.get("content") or []
    return "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text")


def parse_json(text: str) -> Any:
    """`text` as JSON when it is JSON, else the text itself."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null") or re.fullmatch(r"-?\d+(\.\d+)?",
                                                                                               stripped):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text


def result_value(result: Mapping[str, Any]) -> Any:
    """The JSON value a tool result carries: its `structuredContent`, else its text parsed as JSON when it is."""
    structured = result.get("structuredContent")
    if structured is not None:
        return structured
    return parse_json(result_text(result))


def error_body(value: Any) -> bool:
    """Whether a successful result's body is an in-band error object (the tool's own error convention)."""
    if not isinstance(value, Mapping):
        return False
    status = value.get("status")
    if isinstance(status, str) and status.lower() in ERROR_STATUSES and ("message" in value or "error" in value):
        return True
    if value.get("success") is False or value.get("ok") is False:
        return True
    error = value.get("error")
    return isinstance(error, (str, Mapping)) and bool(error) and set(value) <= {"error", "success", "code", "details"}


def classify(result: Mapping[str, Any]) -> Outcome:
    """The outcome of one tool result (a `CallToolResult` as JSON; a JSON-RPC error as `{"jsonrpc_error": …}`)."""
    if result.get("jsonrpc_error") is not None:
        return "rejected"
    meta = result.get("_meta") or result.get("meta") or {}
    if result.get("isError"):
        problem = meta.get(GECKO_PROBLEM) if isinstance(meta, Mapping) else None
        if isinstance(problem, Mapping):
            return "rejected" if problem.get("status") == 422 else "error"
        return "rejected" if _VALIDATION.search(result_text(result)) else "error"
    return "error" if error_body(result_value(result)) else "ok"
