"""The interface of real-tool backends: execute a call on real tools, and say whether a tool reads or writes.

A backend holds the real state of one task (BFCL tool-class instances, a tau2 database, ...). Callers
dispatch parsed calls (a name and literal arguments) to it; nothing is ever evaluated from text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ToolKind = Literal["read", "write"]
"""`read`: a call leaves the backend's state unchanged. `write`: it may change it."""


@dataclass(frozen=True)
class ToolCall:
    """A call to execute: the tool name and keyword arguments holding plain values."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    """What a real tool returned, as the agent sees it."""

    content: str
    """The result rendered as text, in the benchmark's own convention."""
    error: bool = False
    """The tool raised, refused the call, or reported an error in its result."""
    state_changed: bool | None = None
    """Whether the call changed the backend's state; None when the backend cannot tell."""


class RealToolBackend(ABC):
    """Real tools of one task. Not thread-safe: one backend per task, used by one worker at a time."""

    @abstractmethod
    def execute(self, call: ToolCall) -> ToolResult:
        """Execute one call on the real tools. Tool errors come back as results with `error=True`."""

    @abstractmethod
    def kind(self, tool: str) -> ToolKind:
        """Whether `tool` reads or writes state. Backends answer `write` when they do not know."""

    @abstractmethod
    def tool_names(self) -> tuple[str, ...]:
        """The names `execute` dispatches to."""
