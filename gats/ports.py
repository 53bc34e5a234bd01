"""What the GATS loop needs from the simulator: forks of a session, a tool backend per fork, a checklist and
a judge. `inference.gecko.GeckoSandbox` provides it over HTTP; tests provide fakes.

Implementations raise `inference.gecko.GeckoError` (or a subclass) when the simulator fails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from inference.gecko.models import ChecklistReply, JudgeReply
from inference.tools.execution import ToolBackend


class Sandbox(Protocol):
    """The simulator as the loop sees it."""

    async def fork(self, session_id: str, *, labels: Mapping[str, str] | None = None, note: str | None = None) -> str:
        """A new session holding a copy of `session_id`'s state; returns its id.

        `labels` (over the parent's) and `note` (why the fork exists: the attempt's feedback) are recorded with it
        for whoever inspects the sessions later (the viewer's fork tree).
        """
        ...

    async def delete(self, session_id: str) -> None:
        """Drop a session (missing is fine)."""
        ...

    def backend(self, session_id: str) -> ToolBackend:
        """The backend that runs calls in `session_id`."""
        ...

    async def checklist(self, session_id: str, task: str, previous_tasks: Sequence[str]) -> ChecklistReply:
        """The objectives of `task`."""
        ...

    async def judge(
        self, session_id: str, *, task: str, agent_response: str | None, checklist: Sequence[dict[str, str]] | None,
        expects_tool_call: bool = False,
    ) -> JudgeReply:
        """Verdict on the calls made in `session_id` and the agent's answer (`expects_tool_call`: the task needs a
        tool call, so an attempt without one fails the gate)."""
        ...

    async def usage(self, session_id: str) -> list[dict[str, Any]]:
        """LLM usage of the simulator's stages for the calls of `session_id`."""
        ...
