"""Rules checklist and gating judge (the paper's "without task feedback" baseline).

The checklist is the task itself as one item. The judge cannot read meaning: it gates on what it can
check, and fails an attempt when

1. a call was rejected (422 or another error), naming them; a tool's own error answer (a declared 404 for
   a record that does not exist) is a result the agent may act on, not a rejected call;
2. a call an injected fault refused (429, 503, …) was not completed by a later identical call;
3. it made neither a call nor an answer;
4. the caller says the task needs a tool call (`expects_tool_call`) and no call was accepted (or answered
   with the tool's own error): a plain-text answer to such a task is not a success, however well written;
5. an accepted call repeats an earlier accepted call (same tool, same arguments) with no accepted write
   call between them: the repeat did nothing new (a read of unchanged state, or the same write twice, as
   a model that loops does). Identical calls issued in one model message (parallel calls, when the caller
   says which message issued each call) are deliberate and not repeats.

Otherwise every item is `success`. It never claims more than that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gecko.pipeline.stages import ChecklistItem, ItemStatus, ItemVerdict, JudgeInput, JudgeResult
from utils.httpstatus import is_success
from utils.jsonutil import content_hash
from utils.roles import ENGINE_RULES


def unrecovered_faults(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls an injected fault refused (a service error) that no later identical call completed."""
    unrecovered = []
    for index, call in enumerate(calls):
        if not call.get("fault") or is_success(call.get("status")):
            continue
        if not any(is_success(later.get("status")) and later.get("tool") == call.get("tool")
                   and later.get("arguments") == call.get("arguments") for later in calls[index + 1:]):
            unrecovered.append(call)
    return unrecovered


def _tool_names(calls: list[dict[str, Any]]) -> str:
    """The distinct tools of these calls, sorted, for a reason sentence."""
    return ", ".join(sorted({str(c.get("tool")) for c in calls}))


def repeated_calls(calls: list[dict[str, Any]], messages: Sequence[str | int | None] | None = None,
                   ) -> list[dict[str, Any]]:
    """Accepted calls identical (tool and arguments) to an earlier accepted one, with no accepted write between.

    `messages` (one per call, when known; None for a call whose message is unknown) says which model message
    issued each call: an identical call from the same message as the earlier one is a deliberate parallel call,
    not a repeat."""
    if messages is not None and len(messages) != len(calls):
        messages = None
    seen: dict[str, str | int | None] = {}  # call key → the message that first made it
    repeats: list[dict[str, Any]] = []
    for index, call in enumerate(calls):
        if not is_success(call.get("status")):
            continue
        message = messages[index] if messages is not None else None
        key = content_hash(call.get("tool"), call.get("arguments"))
        if key in seen:
            if message is None or seen[key] is None or seen[key] != message:
                repeats.append(call)
        elif call.get("access") == "write":
            seen = {key: message}  # a write changes what later calls see: earlier reads may be made again
        else:
            seen[key] = message
    return repeats


class RulesJudge:
    engine = ENGINE_RULES

    async def checklist(
        self, task: str, previous_tasks: list[str], tools: list[dict[str, Any]], usage: list[dict[str, Any]]
    ) -> list[ChecklistItem]:
        text = " ".join(task.split())
        return [ChecklistItem(id="1", description=f"Complete the user's request: {text}")]

    async def judge(self, data: JudgeInput) -> JudgeResult:
        rejected = [c for c in data.calls if not is_success(c.get("status")) and not c.get("tool_error") and not c.get("fault")]
        blocked = unrecovered_faults(data.calls)
        accepted = [c for c in data.calls if is_success(c.get("status")) or c.get("tool_error")]
        repeats = repeated_calls(data.calls, data.call_messages)
        status: ItemStatus
        if rejected:
            reason = f"{len(rejected)} call(s) were rejected ({_tool_names(rejected)}); fix them as the validation errors say."
            status = "failed"
        elif blocked:
            reason = (f"{len(blocked)} call(s) did not go through ({_tool_names(blocked)}): the service failed them and no later "
                      "identical call succeeded.")
            status = "failed"
        elif not data.calls and not (data.agent_response or "").strip():
            reason, status = "No tool call and no answer were produced.", "failed"
        elif data.expects_tool_call and not accepted:
            reason = ("The request needs a tool call, but the attempt answered in plain text; call the tool that "
                      "does what the user asked.")
            status = "failed"
        elif repeats:
            reason = (f"{len(repeats)} call(s) repeat an earlier identical call ({_tool_names(repeats)}) with nothing changed in "
                      "between; make each call once.")
            status = "failed"
        else:
            reason, status = "All calls passed validation (rules judge: no check of meaning).", "success"
        items = [ItemVerdict(i.id, i.description, status, reason) for i in data.checklist]
        return JudgeResult(items=items, engine=self.engine)
