"""The conversation's tool calls on the real database, through the state controller in the fault arm.

```
agent's tool call ─► ToolResponder.respond ─► clean arm: Environment.respond (tau2's own answer)
                                           └► fault arm: FaultyBackend(EnvironmentBackend(environment), real policy)
                  ◄── ToolMessage (error=True for an injected error)      every call: a CallRecord for the metrics
```

In the fault arm the policy may look at the database (`state` conditions read its JSON); an `external_change`
is recorded as not applied (the database changes only through its tools, so that GATS can replay its writes).
A constraint is delivered as a notice on the tool result (the scripted and LLM users have no channel for it).
"""

from __future__ import annotations

import json
import time
from typing import Any

from benchmarks.taubench.agent_tools import EnvironmentBackend
from benchmarks.taubench.environment import Environment
from benchmarks.taubench.messages import MessageToolCall, ToolMessage
from inference.tools import CallRecord, FaultyBackend, ToolCatalog, ToolOutcome
from utils.faults import FaultPolicy


class ToolResponder:
    """Answers the conversation's tool calls on `environment` and keeps a record of each.

    Args:
        environment: the conversation's live environment.
        catalog: the agent's tools (for the records' schemas).
        policy: the real side's fault policy (None: the clean arm, tau2's own answers).
    """

    def __init__(self, environment: Environment, catalog: ToolCatalog, policy: FaultPolicy | None = None) -> None:
        self.environment = environment
        self.catalog = catalog
        self.records: list[CallRecord] = []
        """Every call the agent made, in order."""
        self.faulty = None if policy is None else FaultyBackend(
            EnvironmentBackend(environment), policy, side="real",
            state_view=lambda: environment.db.model_dump(mode="json"))

    async def respond(self, call: MessageToolCall) -> ToolMessage:
        """The tool message answering `call`."""
        started = time.perf_counter()
        tool = self.catalog.by_original_name(call.name) if call.requestor != "user" else None
        if self.faulty is not None and tool is not None:
            outcome = await self.faulty.execute(tool, dict(call.arguments))
            message = ToolMessage(id=call.id, content=outcome.content, requestor=call.requestor, error=not outcome.ok)
        else:
            message = self.environment.respond(call)
            outcome = ToolOutcome(not message.error, message.content or "", body=message.content)
        self.records.append(CallRecord(call_id=call.id, step=len(self.records), agent_name=call.name,
                                       raw_arguments=json.dumps(call.arguments, default=str),
                                       arguments=dict(call.arguments), tool=tool, outcome=outcome,
                                       latency_s=time.perf_counter() - started))
        return message

    @property
    def injections(self) -> list[dict[str, Any]]:
        """The fault records of this conversation ([] in the clean arm)."""
        return list(self.faulty.records) if self.faulty is not None else []
