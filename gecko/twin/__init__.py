"""Twins that learn from the real thing: capture a real MCP server's calls, learn its contract from them.

See `README.md` beside this file; the CLI is `gecko twin` (`gecko.twin.cli`).

The names below are imported on first use: the server imports `gecko.twin.outcome` (the MCP error bodies), and
importing the package must not import the learner and the converters with it (start-up time).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gecko.twin.capture import (
        Capture,
        CaptureError,
        capture_calls,
        from_history,
        read_captures,
        write_captures,
    )
    from gecko.twin.learn import LearnReport, learn_toolkit
    from gecko.twin.outcome import classify, result_value

_WHERE = {
    "Capture": "capture", "CaptureError": "capture", "capture_calls": "capture", "from_history": "capture",
    "read_captures": "capture", "write_captures": "capture", "LearnReport": "learn", "learn_toolkit": "learn",
    "classify": "outcome", "result_value": "outcome",
}
__all__ = ["Capture", "CaptureError", "LearnReport", "capture_calls", "classify", "from_history", "learn_toolkit",
           "read_captures", "result_value", "write_captures"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
