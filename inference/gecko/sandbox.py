"""`GeckoSandbox`: forks, tool backends, checklist and judge of one Gecko server, as the GATS loop uses them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inference.gecko.backend import GeckoToolBackend
from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoError
from inference.gecko.models import ChecklistReply, JudgeReply


class GeckoSandbox:
    """The GATS loop's simulator (`gats.ports.Sandbox`) over a `GeckoClient`.

    Args:
        client: The shared client.
    """

    def __init__(self, client: GeckoClient) -> None:
        self.client = client

    async def fork(self, session_id: str, *, labels: Mapping[str, str] | None = None, note: str | None = None) -> str:
        """`POST /sessions/{id}/fork` with the fork's labels and note."""
        return (await self.client.fork(session_id, labels=labels, note=note)).session_id

    async def delete(self, session_id: str) -> None:
        """`DELETE /sessions/{id}`; a failure is ignored (sessions expire after their TTL anyway)."""
        try:
            await self.client.delete_session(session_id)
        except GeckoError:
            pass

    def backend(self, session_id: str) -> GeckoToolBackend:
        """Tool calls in `session_id`."""
        return GeckoToolBackend(self.client, session_id)

    async def checklist(self, session_id: str, task: str, previous_tasks: Sequence[str]) -> ChecklistReply:
        """`POST /sessions/{id}/checklist`."""
        return await self.client.checklist(session_id, task, previous_tasks)

    async def judge(
        self, session_id: str, *, task: str, agent_response: str | None, checklist: Sequence[dict[str, str]] | None,
        expects_tool_call: bool = False,
    ) -> JudgeReply:
        """`POST /sessions/{id}/judge`."""
        return await self.client.judge(session_id, task=task, agent_response=agent_response, checklist=checklist,
                                       expects_tool_call=expects_tool_call)

    async def usage(self, session_id: str) -> list[dict[str, Any]]:
        """Usage records of the session's history."""
        return await self.client.session_usage(session_id)
