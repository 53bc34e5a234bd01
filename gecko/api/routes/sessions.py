"""Sessions under `/sessions/…`: create, read, history, fork, delete, checklist, judge."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Body, Query, Response

from gecko.api.deps import MAX_INT64, ContextDep, GeckoRoute
from gecko.api.models import (
    ChecklistPublic,
    ChecklistRequest,
    FaultsPublic,
    ForkRequest,
    HistoryPublic,
    ItemVerdictPublic,
    JudgePublic,
    JudgeRequest,
    SessionConfig,
    SessionCreate,
    SessionPublic,
    StateAtPublic,
    UsagePublic,
)
from gecko.api.openapi import BODY_PROBLEMS, problem_responses
from gecko.api.problems import ProblemError
from gecko.pipeline.faults import (
    CONSTRAINTS_KEY,
    FAULT_STATE_KEY,
    FAULTS_KEY,
    fault_summary,
    forked_config,
    merge_constraints,
)
from gecko.pipeline.runner import compact_call, is_tool_call
from gecko.pipeline.stages import ChecklistItem, JudgeFailure, JudgeInput
from gecko.sessions.listing import CHECKLIST_ENTRY, JUDGE_ENTRY
from gecko.sessions.model import Commit, SessionNotFound, SessionRecord
from gecko.sessions.service import create_session, fork_session, mutate_session
from utils.faults import FaultPolicy
from utils.jsonutil import content_hash

router = APIRouter(prefix="/sessions", tags=["sessions"], route_class=GeckoRoute)
_SESSION = problem_responses(404, 503)
_SESSION_BODY = problem_responses(404, 503, *BODY_PROBLEMS)


MAX_RECORDED_ANSWER = 4000
"""Characters of the agent's answer kept in a verdict's history entry."""


def checklists_public(checklists: dict[str, Any]) -> list[dict[str, Any]]:
    """The checklists of a session (`task`, `items`, `engine`), the one made or used last at the end."""
    last = checklists.get("_last")
    made = [(key, value) for key, value in checklists.items() if key != "_last" and isinstance(value, dict)]
    made.sort(key=lambda item: item[0] == last)
    return [{"task": value.get("task"), "items": value.get("items", []), "engine": value.get("engine")}
            for _, value in made]


def session_public(record: SessionRecord, version: int | None = None) -> SessionPublic:
    return SessionPublic(session_id=record.id, config=record.config, state=record.state,
                         version=record.version if version is None else version,
                         created=record.created, updated=record.updated, expires=record.expires,
                         status=record.status, calls=record.calls, checklists=checklists_public(record.checklists))


def check_toolkits(ctx: ContextDep, config: SessionConfig) -> None:
    unknown = [t for t in config.toolkits or [] if ctx.registry.toolkit(t) is None]
    if unknown:
        raise ProblemError(422, "Unknown toolkits", f"unknown toolkit(s): {', '.join(unknown)}", "unknown-toolkit")


async def load(ctx: ContextDep, session_id: str) -> SessionRecord:
    record = await ctx.store.get(session_id)
    if record is None:
        raise SessionNotFound(session_id)
    return record


@router.post("", status_code=201, response_model=SessionPublic, responses=problem_responses(503, *BODY_PROBLEMS))
async def create(ctx: ContextDep, body: SessionCreate = Body(default_factory=SessionCreate)) -> SessionPublic:
    """Create a session; body (optional): `{"config": {...}, "state": {...}}`."""
    check_toolkits(ctx, body.config)
    config = body.config.model_dump(exclude_none=True, exclude_defaults=True)
    if body.config.faults is not None:
        config[FAULTS_KEY] = body.config.faults.public()
    return session_public(await create_session(ctx.store, config, body.state))


@router.get("/{session_id}", response_model=SessionPublic, responses=_SESSION)
async def read(session_id: str, ctx: ContextDep) -> SessionPublic:
    """The session: config, current state and version, timestamps."""
    return session_public(await load(ctx, session_id))


@router.get("/{session_id}/history", responses=problem_responses(404, 422, 503))
async def history(session_id: str, ctx: ContextDep, limit: int = Query(100, ge=1, le=10000),
                  offset: int = Query(0, ge=0, le=MAX_INT64)) -> HistoryPublic:
    """Every call of the session: request, validation outcome, response, engines, timings, usage."""
    await load(ctx, session_id)
    calls = await ctx.store.history(session_id, limit, offset)
    return HistoryPublic(session_id=session_id, offset=offset, calls=calls)


@router.get("/{session_id}/state", responses=problem_responses(404, 422, 503))
async def state_at(session_id: str, ctx: ContextDep,
                   version: int | None = Query(None, ge=0, le=MAX_INT64)) -> StateAtPublic:
    """The current state, or the state at `version` (rebuilt from its checkpoint and deltas).

    A version outside the retention window (`--max-versions`) is a 404 naming the versions kept.
    """
    record = await load(ctx, session_id)
    if version is None or version == record.version:
        return StateAtPublic(session_id=session_id, version=record.version, state=record.state)
    state = await ctx.store.state_at(session_id, version, record.version)
    return StateAtPublic(session_id=session_id, version=version, state=state)


@router.get("/{session_id}/usage", responses=_SESSION)
async def usage(session_id: str, ctx: ContextDep) -> UsagePublic:
    """LLM usage of the session per role and model: calls, tokens, latency, cache hits, cost."""
    from utils.llm.usage import UsageAggregator

    await load(ctx, session_id)
    entries = await ctx.store.history(session_id, 100000, 0)
    records = [r for entry in entries for r in entry.get("usage") or []]
    return UsagePublic(session_id=session_id, **UsageAggregator(records).summary(), faults=fault_summary(entries))


@router.post("/{session_id}/fork", status_code=201, response_model=SessionPublic, responses=_SESSION_BODY)
async def fork(session_id: str, ctx: ContextDep, body: ForkRequest = Body(default_factory=ForkRequest)) -> SessionPublic:
    """A new session with a copy of this one's state and config (GATS forks one per attempt).

    Optional body `{"faults": policy | null, "labels": {...}, "note": "..."}`: replace the inherited fault policy
    (and start its count afresh); labels over the parent's, and why the fork exists.
    """
    replace = "faults" in body.model_fields_set
    return session_public(await fork_session(ctx.store, session_id,
                                             lambda config: forked_config(config, replace, body.faults),
                                             labels=body.labels, note=body.note))


def faults_public(ctx: ContextDep, record: SessionRecord, entries: list[dict[str, Any]]) -> FaultsPublic:
    policy = ctx.runner.faults.policy_for(record.config)
    return FaultsPublic(session_id=record.id, source=ctx.runner.faults.source(record.config),
                        policy=policy.public() if policy is not None else None,
                        state=record.config.get(FAULT_STATE_KEY) or {}, injected=fault_summary(entries),
                        constraints=list(record.checklists.get(CONSTRAINTS_KEY) or []))


@router.get("/{session_id}/faults", response_model=FaultsPublic, responses=_SESSION)
async def get_faults(session_id: str, ctx: ContextDep) -> FaultsPublic:
    """The fault policy in effect (the session's own, else the server's), its state and what it injected."""
    record = await load(ctx, session_id)
    return faults_public(ctx, record, await ctx.store.history(session_id, 100000, 0))


async def _set_faults(ctx: ContextDep, session_id: str, policy: FaultPolicy | None) -> FaultsPublic:
    async def change(record: SessionRecord) -> Commit:
        config = {k: v for k, v in record.config.items() if k not in (FAULTS_KEY, FAULT_STATE_KEY)}
        if policy is not None:
            config[FAULTS_KEY] = policy.public()
        return Commit(config=config)

    await mutate_session(ctx.store, session_id, change)
    record = await load(ctx, session_id)
    return faults_public(ctx, record, await ctx.store.history(session_id, 100000, 0))


@router.put("/{session_id}/faults", response_model=FaultsPublic, responses=_SESSION_BODY)
async def put_faults(session_id: str, policy: FaultPolicy, ctx: ContextDep) -> FaultsPublic:
    """Attach a fault policy to the session (replacing its own; counts start afresh). `{"rules": []}` turns the
    server-wide policy off for this session."""
    return await _set_faults(ctx, session_id, policy)


@router.delete("/{session_id}/faults", response_model=FaultsPublic, responses=_SESSION)
async def delete_faults(session_id: str, ctx: ContextDep) -> FaultsPublic:
    """Remove the session's own policy (the server-wide one, if any, applies again)."""
    return await _set_faults(ctx, session_id, None)


@router.delete("/{session_id}", status_code=204, response_class=Response, responses=_SESSION)
async def delete(session_id: str, ctx: ContextDep) -> Response:
    """Delete the session with its history and versions."""
    if not await ctx.store.delete(session_id):
        raise SessionNotFound(session_id)
    return Response(status_code=204)


def _tools_of(ctx: ContextDep, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for call in calls:
        toolkit, _, op_id = str(call.get("tool", "")).partition("/")
        tk = ctx.registry.toolkit(toolkit)
        op = tk.operations.get(op_id) if tk else None
        if op is not None and op.tool_name not in seen:
            seen[op.tool_name] = {"name": op.tool_name, "description": op.description, "access": op.access,
                                  "arguments_schema": op.args_schema}
    return list(seen.values())


def checklist_entry(usage: list[dict[str, Any]], error: str | None = None) -> dict[str, Any]:
    """A history entry that accounts for the LLM calls of a checklist (`#checklist`), so
    `GET /sessions/{id}/usage` counts every call, failed or not (the `#judge` entry does so for a verdict).
    Judges skip `#` entries."""
    entry: dict[str, Any] = {"at": time.time(), "tool": CHECKLIST_ENTRY, "status": 502 if error else 200, "access": "read",
                             "usage": usage}
    if error:
        entry["error"] = error
    return entry


@router.post("/{session_id}/checklist", response_model=ChecklistPublic, responses={**_SESSION_BODY, **problem_responses(409, 502)})
async def checklist(session_id: str, body: ChecklistRequest, ctx: ContextDep) -> ChecklistPublic:
    """Checklist for a task (cached per session and task): `{"task", "previous_tasks"?}`."""
    key = content_hash(body.task, body.previous_tasks)
    produced: dict[str, Any] = {}
    usage: list[dict[str, Any]] = []
    failed: list[JudgeFailure] = []

    async def change(record: SessionRecord) -> Commit:
        cached = record.checklists.get(key)
        if cached is not None:
            produced.update(cached, cached=True)
            return Commit(checklists={**record.checklists, "_last": key})
        try:
            items = await ctx.engines.judge.checklist(body.task, body.previous_tasks, [], usage)
        except JudgeFailure as exc:
            failed.append(exc)
            return Commit(history=checklist_entry(usage, str(exc)))
        produced.update(task=body.task, items=[{"id": i.id, "description": i.description} for i in items],
                        engine=ctx.engines.judge.engine)
        return Commit(checklists={**record.checklists, key: dict(produced), "_last": key},
                      history=checklist_entry(usage) if usage else None)

    record, _ = await mutate_session(ctx.store, session_id, change)
    if failed:
        raise failed[0]
    items = merge_constraints([ChecklistItem(i["id"], i["description"]) for i in produced["items"]], record.checklists)
    produced["items"] = [{"id": i.id, "description": i.description} for i in items]
    return ChecklistPublic(**produced, usage=usage)


@router.post("/{session_id}/judge", response_model=JudgePublic, responses={**_SESSION_BODY, **problem_responses(409, 502)})
async def judge(session_id: str, ctx: ContextDep, body: JudgeRequest = Body(default_factory=JudgeRequest)) -> JudgePublic:
    """Verify each checklist item against state, calls, responses and the agent's answer (body optional)."""
    record = await load(ctx, session_id)
    last = record.checklists.get(record.checklists.get("_last", ""), {})
    task = body.task or last.get("task")
    if not task:
        raise ProblemError(409, "No task", "the session has no checklist yet: give `task`, or create a checklist "
                           f"first with POST /sessions/{session_id}/checklist", "missing-task")
    usage: list[dict[str, Any]] = []
    entry: dict[str, Any] = {"tool": JUDGE_ENTRY, "at": time.time(), "task": task, "access": "read",
                             "agent_response": (body.agent_response or "")[:MAX_RECORDED_ANSWER] or None,
                             "since_version": body.since_version}
    started = time.perf_counter()
    try:
        if body.checklist is not None:
            items = [ChecklistItem(i.id, i.description) for i in body.checklist]
        else:
            cached = record.checklists.get(content_hash(task, []), last if last.get("task") == task else {})
            items = [ChecklistItem(i["id"], i["description"]) for i in cached.get("items", [])]
            if not items:
                items = await ctx.engines.judge.checklist(task, [], [], usage)
        items = merge_constraints(items, record.checklists)
        entries = await ctx.store.history(session_id, 100000, 0)
        if body.since_version is not None:
            entries = [e for e in entries if e.get("state_version", 0) > body.since_version]
        calls = [compact_call(e) for e in entries if is_tool_call(e)]
        data = JudgeInput(task=task, checklist=items, state=record.state, calls=calls,
                          agent_response=body.agent_response, tools=_tools_of(ctx, calls), usage=usage,
                          expects_tool_call=body.expects_tool_call,
                          call_messages=[c.get("message") for c in calls] if any("message" in c for c in calls)
                          else None)
        result = await ctx.engines.judge.judge(data)
    except JudgeFailure as exc:  # recorded as no verdict (its LLM calls accounted), then a 502 problem
        entry.update(status=502, error=str(exc), timings_ms={"judge": round((time.perf_counter() - started) * 1000, 3)},
                     verdict=None, usage=usage)
        await _record_verdict(ctx, session_id, entry)
        raise
    public = JudgePublic(
        success=result.success,
        items=[ItemVerdictPublic(id=i.id, description=i.description, status=i.status, reasoning=i.reasoning)
               for i in result.items],
        remaining=result.remaining, engine=result.engine, usage=usage, panel=result.panel,
    )
    # The verdict's LLM calls are in the entry's `usage`, which /usage sums (the reply carries them too).
    entry.update(status=200, timings_ms={"judge": round((time.perf_counter() - started) * 1000, 3)},
                 verdict=public.model_dump(exclude={"usage"}), usage=usage)
    await _record_verdict(ctx, session_id, entry)
    return public


async def _record_verdict(ctx: ContextDep, session_id: str, entry: dict[str, Any]) -> None:
    """Append the judge's verdict (or failure) to the session's history: its status and the viewer show it."""

    async def change(record: SessionRecord) -> Commit:
        return Commit(history=entry)

    await mutate_session(ctx.store, session_id, change)
