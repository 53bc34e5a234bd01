"""Endpoints kept for compatibility with the reference server; the session id travels in `X-Session-ID`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body

from gecko.api.deps import ContextDep, GeckoRoute, SessionHeaderDep
from gecko.api.models import (
    InitStateBody,
    RealCallsBody,
    RealSyncPublic,
    SessionIdPublic,
    SessionStatePublic,
    StateBody,
    StateInitPublic,
    StateSetPublic,
)
from gecko.api.openapi import BODY_PROBLEMS, SESSION_PROBLEMS, problem_responses
from gecko.api.problems import ProblemError
from gecko.pipeline.faults import synced_config
from gecko.pipeline.stages import RealCall
from gecko.pipeline.state.rules import RulesStateUpdater
from gecko.sessions.model import Commit, SessionNotFound, SessionRecord
from gecko.sessions.service import create_session, deep_merge_defaults, mutate_session

router = APIRouter(tags=["compat"], route_class=GeckoRoute)
_CHANGES = problem_responses(*SESSION_PROBLEMS, *BODY_PROBLEMS, 409)


@router.get("/session-id", responses=problem_responses(503))
async def session_id(ctx: ContextDep) -> SessionIdPublic:
    """Create a session with the default config and return its id."""
    record = await create_session(ctx.store, {}, {})
    return SessionIdPublic(session_id=record.id, message="send this id in the X-Session-ID header")


@router.post("/set-session-state", responses=_CHANGES)
async def set_session_state(body: StateBody, sid: SessionHeaderDep, ctx: ContextDep) -> StateSetPublic:
    """Replace the session's state: `{"state": {...}}`."""

    async def change(record: SessionRecord) -> Commit:
        return Commit(state=body.state, history={"tool": "#set-session-state", "status": 200, "access": "write"})

    _, version = await mutate_session(ctx.store, sid, change)
    return StateSetPublic(message="state set", version=version)


@router.post("/init-session-state", responses=_CHANGES)
async def init_session_state(sid: SessionHeaderDep, ctx: ContextDep,
                             body: InitStateBody = Body(default_factory=InitStateBody)) -> StateInitPublic:
    """Merge each involved toolkit's declared default state under its name; the given state wins (body optional)."""
    names = body.involved_classes
    if names is not None:
        unknown = [n for n in names if ctx.registry.toolkit(n) is None]
        if unknown:
            raise ProblemError(422, "Unknown toolkits", f"unknown toolkit(s) in involved_classes: {', '.join(unknown)}",
                               "unknown-toolkit")
        toolkits = [ctx.registry.toolkit(n) for n in names]
    else:
        toolkits = [t for t in ctx.registry.toolkits.values() if t.default_state is not None]
    defaults = {t.name: t.default_state for t in toolkits if t is not None and t.default_state is not None}
    merged = deep_merge_defaults(body.state, defaults)
    state_engine = ctx.engines.state

    async def change(record: SessionRecord) -> Commit:
        usage: list[dict[str, Any]] = []
        state = deep_merge_defaults(merged, record.state) if record.state else merged
        if state_engine is not None:
            state = await state_engine.bootstrap(state, [t.name for t in toolkits if t is not None], usage)
        return Commit(state=state, history={"tool": "#init-session-state", "status": 200, "access": "write",
                                            "usage": usage})

    record, version = await mutate_session(ctx.store, sid, change)
    return StateInitPublic(message="state initialised", version=version, state=record.state)


@router.get("/get-session-state", responses=problem_responses(*SESSION_PROBLEMS))
async def get_session_state(sid: SessionHeaderDep, ctx: ContextDep) -> SessionStatePublic:
    """The session's current state and its version."""
    record = await ctx.store.get(sid)
    if record is None:
        raise SessionNotFound(sid)
    return SessionStatePublic(state=record.state, version=record.version)


@router.post("/update-state-from-real", responses=_CHANGES)
async def update_state_from_real(body: RealCallsBody, sid: SessionHeaderDep, ctx: ContextDep) -> RealSyncPublic:
    """Fold real tool results into the state: reads under `observed`, writes through the state updater."""
    calls = []
    for call in body.calls():
        op = None
        if call.toolkit is not None:
            tk = ctx.registry.toolkit(call.toolkit)
            if tk is None:
                raise ProblemError(422, "Unknown toolkit", f"unknown toolkit {call.toolkit!r} in tool call "
                                   f"{call.name!r}", "unknown-toolkit")
            op = tk.operations.get(call.name) or next(
                (o for o in tk.operations.values() if o.original_name == call.name), None)
        else:
            op = next((o for tk in ctx.registry.toolkits.values() for o in tk.operations.values()
                       if call.name in (o.operation_id, o.original_name)), None)
        access = op.access if op is not None else "write"
        calls.append(RealCall(call.name, call.arguments, call.result, call.toolkit, op, access))
    if not calls:
        raise ProblemError(422, "No tool calls", "send `tool_calls: [{name, arguments, result, toolkit?}]`",
                           "missing-tool-calls")
    updater = ctx.engines.state or RulesStateUpdater()

    async def change(record: SessionRecord) -> Commit:
        usage: list[dict[str, Any]] = []
        result = await updater.apply_real(record.state, calls, usage)
        return Commit(state=result.state, patch=result.patch,
                      config=synced_config(ctx.runner.faults, record.config, [c.access for c in calls]), history={
            "tool": "#update-state-from-real", "status": 200, "access": "write", "usage": usage,
            "real_calls": [{"name": c.name, "toolkit": c.toolkit, "access": c.access} for c in calls],
            "engines": {"state": {"engine": result.engine, "fallback": result.fallback}}})

    record, version = await mutate_session(ctx.store, sid, change)
    return RealSyncPublic(success=True, version=version, updated_state=record.state)
