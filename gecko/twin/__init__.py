"""Twins that learn from the real thing: capture a real MCP server's calls, learn its contract from them.

See `README.md` beside this file; the CLI is `gecko twin` (`gecko.twin.cli`).
"""

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

__all__ = ["Capture", "CaptureError", "LearnReport", "capture_calls", "classify", "from_history", "learn_toolkit",
           "read_captures", "result_value", "write_captures"]
