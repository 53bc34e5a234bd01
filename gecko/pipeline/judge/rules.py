"""Rules checklist and gating judge (the paper's "without task feedback" baseline).

The checklist is the task itself as one item. The judge cannot read meaning: it gates on what it can
check — an attempt with rejected calls (422) fails, naming them; an attempt with a call an injected fault
refused (429, 503, …) that no later identical call completed fails; an attempt with neither calls nor an
answer fails; otherwise every item is `success`. It never claims more than that. A tool's own error
answer (a declared 404 for a record that does not exist) is a result the agent may act on, not a
rejected call.
"""

from __future__ import annotations

from typing import Any

from gecko.pipeline.stages import ChecklistItem, ItemStatus, ItemVerdict, JudgeInput, JudgeResult
from utils.roles import ENGINE_RULES


def unrecovered_faults(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls an injected fault refused (a service error) that no later identical call completed."""
    unrecovered = []
    for index, call in enumerate(calls):
        if not call.get("fault") or call.get("status") == 200:
            continue
        if not any(later.get("status") == 200 and later.get("tool") == call.get("tool")
                   and later.get("arguments") == call.get("arguments") for later in calls[index + 1:]):
            unrecovered.append(call)
    return unrecovered


class RulesJudge:
    engine = ENGINE_RULES

    async def checklist(
        self, task: str, previous_tasks: list[str], tools: list[dict[str, Any]], usage: list[dict[str, Any]]
    ) -> list[ChecklistItem]:
        text = " ".join(task.split())
        return [ChecklistItem(id="1", description=f"Complete the user's request: {text}")]

    async def judge(self, data: JudgeInput) -> JudgeResult:
        rejected = [c for c in data.calls if c.get("status") != 200 and not c.get("tool_error") and not c.get("fault")]
        blocked = unrecovered_faults(data.calls)
        status: ItemStatus
        if rejected:
            names = ", ".join(sorted({str(c.get("tool")) for c in rejected}))
            reason = f"{len(rejected)} call(s) were rejected ({names}); fix them as the validation errors say."
            status = "failed"
        elif blocked:
            names = ", ".join(sorted({str(c.get("tool")) for c in blocked}))
            reason = (f"{len(blocked)} call(s) did not go through ({names}): the service failed them and no later "
                      "identical call succeeded.")
            status = "failed"
        elif not data.calls and not (data.agent_response or "").strip():
            reason, status = "No tool call and no answer were produced.", "failed"
        else:
            reason, status = "All calls passed validation (rules judge: no check of meaning).", "success"
        items = [ItemVerdict(i.id, i.description, status, reason) for i in data.checklist]
        return JudgeResult(items=items, engine=self.engine)
