"""Keep or drop a candidate task: its reference solution must run green in Gecko, from its initial state, in a
session of its own; it must not be trivial or a duplicate, and must satisfy its own constraints.

Drop reasons (the manifest's `dropped`): `no_chain` (the engine's draw gave nothing), `llm_output` (the model's
reply did not fit its schema, even after the repair round), `trivial` (fewer than `MIN_CALLS` calls or `MIN_APPS` apps, or no write), `duplicate` (the same reference
as a kept task), `constraint_unmet` (the reference breaks a constraint or a check is malformed),
`reference_rejected` (Gecko refused a call's arguments: 422 or an unknown tool), `reference_failed` (any other
non-200 answer, or the simulated tool answered with its own error), `gecko_error` (Gecko answered a call with a
5xx of its own, e.g. a response schema it cannot satisfy), `judge_failed` (every call succeeded, but Gecko's judge,
the one that scores the agents, does not find the task done by its own reference: e.g. an identical call repeated
with nothing changed in between), `unjudged` (the judge gave no verdict). A server that does not answer at all
stops the run.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from benchmarks.openworld.tasks.constraints import constraint_holds, well_formed
from benchmarks.openworld.tasks.model import OpenWorldTask
from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoJudgeError, GeckoUnavailableError

MIN_CALLS = 5
MIN_APPS = 2


@dataclass(frozen=True)
class Verdict:
    """Whether to keep a task, and why not."""

    kept: bool
    reason: str = ""
    detail: str = ""


def reference_key(task: OpenWorldTask) -> str:
    """What makes two tasks the same: their reference calls."""
    calls = [[c.toolkit, c.tool, c.arguments] for c in task.reference]
    return hashlib.sha256(json.dumps(calls, sort_keys=True).encode()).hexdigest()


def static_verdict(task: OpenWorldTask, writes: set[tuple[str, str]], seen: set[str]) -> Verdict:
    """The checks that need no server. `writes`: (toolkit, operationId) of the pool's write tools."""
    if (len(task.reference) < MIN_CALLS or len(set(task.apps)) < MIN_APPS
            or not any((c.toolkit, c.tool) in writes for c in task.reference)):
        return Verdict(False, "trivial", f"{len(task.reference)} calls over {len(set(task.apps))} apps")
    if reference_key(task) in seen:
        return Verdict(False, "duplicate")
    for constraint in task.constraints:
        if not well_formed(constraint) or constraint_holds(constraint, task.reference) is False:
            return Verdict(False, "constraint_unmet", constraint.id)
    return Verdict(True)


async def run_reference(client: GeckoClient, task: OpenWorldTask) -> Verdict:
    """Run the reference in a new Gecko session (deleted after); the first failing call decides."""
    config: dict[str, Any] = {"labels": {"task": task.id[:64]}}
    session = await client.create_session(config, task.initial_state or {})
    try:
        for number, call in enumerate(task.reference, 1):
            try:
                reply = await client.call_tool(session.session_id, call.toolkit, call.tool, call.arguments)
            except GeckoUnavailableError as exc:
                if exc.status is None:  # no answer at all: the server is down, not the task's fault
                    raise
                return Verdict(False, "gecko_error", f"call {number} {call.toolkit}/{call.tool}: {str(exc)[:200]}")
            if reply.ok and not reply.tool_error:
                continue
            where = f"call {number} {call.toolkit}/{call.tool}: {reply.status}"
            if reply.status in (404, 405, 413, 422) and not reply.tool_error:
                return Verdict(False, "reference_rejected", f"{where} {reply.detail[:200]}")
            return Verdict(False, "reference_failed", where)
        return await judge_reference(client, session.session_id, task)
    finally:
        await client.delete_session(session.session_id)


async def judge_reference(client: GeckoClient, session_id: str, task: OpenWorldTask) -> Verdict:
    """The judge that scores the agents, on the reference's session: a task its own reference does not pass
    could never be passed, so it is not kept."""
    checklist = [{"id": str(number), "description": item} for number, item in enumerate(task.checklist, 1)]
    try:
        reply = await client.judge(session_id, task=task.instruction, checklist=checklist, expects_tool_call=True)
    except GeckoJudgeError as exc:
        return Verdict(False, "unjudged", str(exc)[:200])
    if not reply.success:
        failed = [f"{item.id}: {item.reasoning}" for item in reply.items if item.status != "success"]
        return Verdict(False, "judge_failed", "; ".join(failed or reply.remaining)[:300])
    return Verdict(True)
