"""`HybridToolBackend`: reads run on real tools, writes are simulated (GATS hybrid mode, paper §6.1).

```
call ─► is the tool a read?  ── yes ─► real backend (a scratch copy of the real environment) ─► buffered
                             └─ no ──► flush buffered real reads to the simulator (`sync`) ─► simulated backend
```

Real read results are buffered and handed to `sync` (e.g. Gecko's `/update-state-from-real`) just before
the next simulated call, so the simulator's write responses agree with the facts the agent has just read.
The backend is generic: which tools are reads, where reads run and how they are synced are the caller's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from inference.tools.catalog import CatalogTool
from inference.tools.execution import ToolBackend, ToolOutcome


@dataclass(frozen=True)
class ObservedCall:
    """A call executed on real tools, as the simulator is told about it."""

    tool: CatalogTool
    arguments: dict[str, Any]
    outcome: ToolOutcome

    def sync_record(self) -> dict[str, Any]:
        """`{name, arguments, result, toolkit}`: one entry of `/update-state-from-real`."""
        result = self.outcome.body if self.outcome.body is not None else self.outcome.content
        return {"name": self.tool.original_name, "arguments": self.arguments, "result": result,
                "toolkit": self.tool.toolkit}


Sync = Callable[[Sequence[ObservedCall]], Awaitable[None]]
"""Tells the simulator about real calls (raises `ToolInfrastructureError` when it cannot)."""


class HybridToolBackend:
    """Routes each call to the real or the simulated backend by the tool's access.

    Args:
        real: backend over real tools (a scratch copy: its writes would never be used here).
        simulated: backend over the simulator session of this rollout.
        is_read: whether a tool only reads (default: `tool.access == "read"`).
        sync: receives the real reads made since the last simulated call; None keeps them local.
    """

    def __init__(self, real: ToolBackend, simulated: ToolBackend, *,
                 is_read: Callable[[CatalogTool], bool] | None = None, sync: Sync | None = None) -> None:
        self.real = real
        self.simulated = simulated
        self._is_read = is_read or (lambda tool: tool.access == "read")
        self._sync = sync
        self._pending: list[ObservedCall] = []
        self.real_calls = 0
        self.simulated_calls = 0

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        """Run a read for real (and remember it) or flush the remembered reads and simulate a write.

        Raises:
            ToolInfrastructureError: a backend or the sync failed.
        """
        if self._is_read(tool):
            outcome = await self.real.execute(tool, arguments, message)
            self.real_calls += 1
            self._pending.append(ObservedCall(tool, dict(arguments), outcome))
            return outcome
        await self.flush()
        self.simulated_calls += 1
        return await self.simulated.execute(tool, arguments, message)

    async def flush(self) -> None:
        """Hand the buffered real reads to `sync` (successful ones only: errors say nothing of the state)."""
        pending, self._pending = [c for c in self._pending if c.outcome.ok], []
        if pending and self._sync is not None:
            await self._sync(pending)
