"""`FaultyBackend`: a fault policy on any tool backend (the runners' real-tool bridges), with the same engine and
the same effects as Gecko's state controller (`utils.faults`).

```
ToolExecutor ─► FaultyBackend.execute ─► decide (call n, seeded) ─► blocking: the service's error, nothing runs
                                                                 ├► stale_read: the same read's earlier answer
                                                                 ├► delay: sleep, then the call
                                                                 ├► external_change: `patch_state(patch)`, then the call
                                                                 └► the call ─► corrupt / constraint notice
                      ◄── ToolOutcome(..., fault=record)     every injection: `ToolOutcome.fault` and `records`
```

Used by BFCL multi-turn's real tool classes, tau2's real database (the conversation and the GATS rehearsals),
and anything else that runs calls through a `ToolBackend`. A constraint delivered to the user (`deliver: user`)
waits in `pending_user` for a runner that has a user; without one (`user_channel=False`) it becomes a notice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from inference.tools.catalog import CatalogTool
from inference.tools.execution import ToolBackend, ToolError, ToolOutcome
from utils.faults import (
    CallFacts,
    Earlier,
    FaultPolicy,
    FaultState,
    Injection,
    ServiceError,
    Side,
    constraint_item,
    corrupt_text,
    decide,
    needs_earlier,
    needs_state,
    notice_text,
    observe,
    service_error,
    wait_seconds,
    with_notice,
)
from utils.jsonutil import canonical_json, dumps_compact

EARLIER_ANSWERS = 256
"""Read answers remembered per backend for `stale_read`."""
Sleep = Callable[[float], Awaitable[None]]


def default_error_text(error: ServiceError) -> str:
    """A service error as the agent sees it: `{"error", "status", "detail", "retry_after"?}` (the same text
    `GeckoToolBackend` shows for an error Gecko injected)."""
    return dumps_compact(error.payload())


def service_error_outcome(error: ServiceError, record: dict[str, Any], text: str) -> ToolOutcome:
    """The outcome of a call a blocking fault answered."""
    return ToolOutcome(False, text, body=error.payload(), status=error.status, error_kind="service_error",
                       errors=(ToolError(error.detail, keyword=error.slug, source="service"),), fault=record)


class FaultyBackend:
    """Applies `policy` to the calls of `inner`.

    Args:
        inner: the backend that really runs calls.
        policy: the fault policy (its `stream` separates this bridge's draws from others').
        side: which side these calls are on (`real` for real tools; rules may select a side).
        state_view: the state as JSON, for rules with a state condition (None: such rules never match).
        patch_state: applies an `external_change` patch to the real state (None: recorded as not applied).
        render_error: how a service error reads as a tool result.
        user_channel: a runner with a user picks up `pending_user` (else user-delivered constraints are notices).
        sleep: awaited for delays (tests pass a recorder).
    """

    def __init__(self, inner: ToolBackend, policy: FaultPolicy, *, side: Side = "real",
                 state_view: Callable[[], Any] | None = None,
                 patch_state: Callable[[Sequence[dict[str, Any]]], None] | None = None,
                 render_error: Callable[[ServiceError], str] = default_error_text,
                 user_channel: bool = False, sleep: Sleep = asyncio.sleep) -> None:
        self.inner = inner
        self.policy = policy
        self.side: Side = side
        self.state = FaultState()
        self.records: list[dict[str, Any]] = []
        """Every injection, in order (with the tool's name)."""
        self.constraints: list[dict[str, Any]] = []
        """Checklist items added or changed by constraints (the task's checklist changes)."""
        self.pending_user: list[str] = []
        """Constraints to deliver as user messages (a runner with a user takes them)."""
        self._state_view = state_view if needs_state(policy) else None
        self._patch_state = patch_state
        self._render_error = render_error
        self._user_channel = user_channel
        self._sleep = sleep
        self._remember = needs_earlier(policy)
        self._earlier: OrderedDict[str, tuple[Earlier, ToolOutcome]] = OrderedDict()

    def take_user_messages(self) -> list[str]:
        """The constraints waiting for the user channel (and forget them)."""
        pending, self.pending_user = self.pending_user, []
        return pending

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        """Run the call through the policy (see the module docstring).

        Raises:
            ToolInfrastructureError: the inner backend failed.
        """
        key = f"{tool.original_name}|{canonical_json(arguments)}"
        earlier = self._earlier.get(key) if self._remember and tool.access == "read" else None
        facts = CallFacts((f"{tool.toolkit}/{tool.operation_id}", tool.operation_id, tool.original_name),
                          tool.access, self.side, mark=self.state.writes, earlier=earlier[0] if earlier else None,
                          state=self._state_view)
        injection = decide(self.policy, self.state, facts)
        if injection is None:
            outcome = await self.inner.execute(tool, arguments, message)
            self._after(tool, key, outcome)
            return outcome
        record = {**injection.public(), "tool": tool.original_name}
        self.records.append(record)
        if injection.kind == "stale_read" and earlier is not None:
            record["from_mark"] = earlier[0].mark
            return _with_fault(earlier[1], record)
        if injection.blocking and not injection.executed:
            await self._wait(injection)
            error = service_error(injection)
            return service_error_outcome(error, record, self._render_error(error))
        await self._wait(injection)
        if injection.kind == "external_change":
            self._change_state(injection, record)
        outcome = await self.inner.execute(tool, arguments, message)
        self._after(tool, key, outcome)
        if injection.blocking:  # a timeout whose call ran: its effects stay, its answer is lost
            error = service_error(injection)
            return service_error_outcome(error, record, self._render_error(error))
        if injection.kind == "corrupt":
            return self._corrupted(outcome, injection, record)
        if injection.kind == "constraint":
            return self._constraint(outcome, injection, record)
        return _with_fault(outcome, record)

    async def _wait(self, injection: Injection) -> None:
        seconds = wait_seconds(injection)
        if seconds:
            await self._sleep(seconds)

    def _after(self, tool: CatalogTool, key: str, outcome: ToolOutcome) -> None:
        observe(self.state, tool.access, outcome.ok)
        if self._remember and tool.access == "read" and outcome.ok:
            self._earlier[key] = (Earlier(outcome.body, self.state.writes), outcome)
            self._earlier.move_to_end(key)
            if len(self._earlier) > EARLIER_ANSWERS:
                self._earlier.popitem(last=False)

    def _change_state(self, injection: Injection, record: dict[str, Any]) -> None:
        if self._patch_state is None:
            record.update(applied=False, reason="this bridge cannot change its state")
            return
        try:
            self._patch_state([dict(op) for op in injection.params["patch"]])
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            record.update(applied=False, reason=f"the patch does not apply: {exc}")
        else:
            record["applied"] = True

    @staticmethod
    def _corrupted(outcome: ToolOutcome, injection: Injection, record: dict[str, Any]) -> ToolOutcome:
        content, what = corrupt_text(outcome.content, injection)
        record.update(what)
        body: Any = content
        if not isinstance(outcome.body, str):
            try:
                body = json.loads(content)
            except ValueError:
                body = content
        return dataclasses.replace(outcome, content=content, body=body, fault=record)

    def _constraint(self, outcome: ToolOutcome, injection: Injection, record: dict[str, Any]) -> ToolOutcome:
        item = constraint_item(injection, len(self.constraints))
        self.constraints.append(item)
        text = item["description"]
        record["checklist_item"] = item["id"]
        if injection.params.get("deliver") == "user" and self._user_channel:
            self.pending_user.append(text)
            record["delivered"] = "user"
            return _with_fault(outcome, record)
        record["delivered"] = "notice"
        return dataclasses.replace(outcome, content=_text_with_notice(outcome.content, text), fault=record,
                                   body=outcome.body if isinstance(outcome.body, str) else with_notice(outcome.body, text))


def _text_with_notice(content: str, text: str) -> str:
    """A JSON object result gets the notice as a member; other text gets it appended."""
    try:
        value = json.loads(content)
    except ValueError:
        return content + notice_text(text)
    return dumps_compact(with_notice(value, text)) if isinstance(value, dict) else content + notice_text(text)


def _with_fault(outcome: ToolOutcome, record: dict[str, Any]) -> ToolOutcome:
    return dataclasses.replace(outcome, fault=record)
