"""Real tools: the interface a benchmark implements for the real tools of one task (`RealTools`), and the
executor's backend over it (`RealToolsBackend`).

```
ToolExecutor ─► RealToolsBackend.execute(CatalogTool, arguments) ─► RealTools.execute(RealCall) ─► RealResult
```

A `RealTools` holds the real state of one task (BFCL tool-class instances, a tau2 database, ...); the
benchmark that owns it implements it (`benchmarks.bfcl.real_tools.BfclRealTools`). Calls are dispatched by the
tool's original name (for BFCL multi-turn, the method name of a tool class) with arguments parsed as literals
elsewhere; nothing is ever evaluated from text. Real tools are in-memory objects that answer in microseconds,
so they run on the event loop; a `RealTools` whose tools do I/O should wrap its work in `asyncio.to_thread`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inference.tools.catalog import Access, CatalogTool
from inference.tools.execution import ToolError, ToolOutcome


@dataclass(frozen=True)
class RealCall:
    """A call to execute on real tools: the tool's original name and keyword arguments holding plain values."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RealResult:
    """What a real tool returned, as the agent sees it."""

    content: str
    """The result rendered as text, in the benchmark's own convention."""
    error: bool = False
    """The tool raised, refused the call, or reported an error in its result."""
    state_changed: bool | None = None
    """Whether the call changed the tools' state; None when the implementation cannot tell."""


class RealTools(ABC):
    """The real tools of one task. Not thread-safe: one instance per task, used by one worker at a time."""

    @abstractmethod
    def execute(self, call: RealCall) -> RealResult:
        """Execute one call on the real tools. Tool errors come back as results with `error=True`."""

    @abstractmethod
    def kind(self, tool: str) -> Access:
        """Whether `tool` reads or writes state. Implementations answer `write` when they do not know."""

    @abstractmethod
    def tool_names(self) -> tuple[str, ...]:
        """The names `execute` dispatches to."""


class RealToolsBackend:
    """The executor's `ToolBackend` over the real tools of one task.

    Args:
        tools: The real tools of one task (not shared between tasks or workers).
    """

    def __init__(self, tools: RealTools) -> None:
        self.tools = tools

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        """Run the call on the real tools; a tool error is an outcome with `error_kind="tool_error"`."""
        result = self.tools.execute(RealCall(tool.original_name, arguments))
        if result.error:
            error = ToolError(result.content, source="real")
            return ToolOutcome(False, result.content, body=result.content, error_kind="tool_error", errors=(error,))
        return ToolOutcome(True, result.content, body=result.content)

    def kind(self, tool: CatalogTool) -> Access:
        """Whether the real tool reads or writes (as the real tools know it; `write` when unsure)."""
        return self.tools.kind(tool.original_name)
