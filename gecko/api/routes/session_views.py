"""Read-only views of sessions for people (the viewer at `/ui` uses them; so can anyone):
`GET /sessions` (a listing), `GET /sessions/{id}/tree` (forks), `GET /sessions/{id}/diff` (one version's change).
"""

from __future__ import annotations

from typing import Annotated, Any

import jsonpatch
from fastapi import APIRouter, Query
from pydantic import StringConstraints

from gecko.api.deps import MAX_INT64, ContextDep
from gecko.api.openapi import problem_responses
from gecko.api.problems import ProblemError
from gecko.api.view_models import (
    DiffPublic,
    SessionListPublic,
    SessionSummaryPublic,
    TreeNodePublic,
    TreePublic,
)
from gecko.sessions.listing import (
    CURSOR_PATTERN,
    JUDGE_ENTRY,
    STATUSES,
    VERDICT_STATUSES,
    SessionQuery,
    SessionSummary,
    decode_cursor,
    encode_cursor,
    label_tag,
    parent_tag,
    toolkit_tag,
)
from gecko.sessions.model import SessionNotFound, SessionRecord
from gecko.sessions.store import SessionStore

router = APIRouter(prefix="/sessions", tags=["sessions"])
LABEL_FILTER = r"^[^=]+="
"""A label filter is `KEY=VALUE` with a non-empty key (the value may be empty)."""
STATUS_FILTER = "^(" + "|".join(STATUSES) + ")$"
TREE_DEPTH = 4
"""Levels of forks shown under the root of a tree."""
TREE_CHILDREN = 200
"""Forks shown per session of a tree (newest kept)."""
ANCESTORS = 16
"""Parents followed up from a session to find the root of its tree."""
VERDICT_LOOKBACK = 8
"""History entries read back from the end of a fork to find its verdict."""


def _query(labels: list[str], toolkit: str | None, status: str | None, parent: str | None, limit: int,
           cursor: str | None) -> SessionQuery:
    tags: list[str] = []
    for label in labels:
        key, _, value = label.partition("=")
        tags.append(label_tag(key, value))
    if toolkit:
        tags.append(toolkit_tag(toolkit))
    if parent:
        tags.append(parent_tag(parent))
    try:
        decoded = decode_cursor(cursor)
    except ValueError as exc:
        raise ProblemError(422, "Invalid cursor", f"{exc}; use the next_cursor of the previous page",
                           "invalid-cursor") from exc
    return SessionQuery(tuple(tags), status, limit, decoded)


@router.get("", response_model=SessionListPublic, responses=problem_responses(422, 503))
async def list_sessions(
    ctx: ContextDep,
    label: list[Annotated[str, StringConstraints(pattern=LABEL_FILTER)]] = Query(
        default_factory=list, description="KEY=VALUE; repeat for several (all must hold)"),
    toolkit: str | None = Query(None, description="sessions of this toolkit (configured, or called)"),
    status: str | None = Query(None, description=f"one of {', '.join(STATUSES)}", pattern=STATUS_FILTER),
    parent: str | None = Query(None, description="forks of this session"),
    limit: int = Query(50, ge=1, le=500),
    cursor: str | None = Query(None, description="next_cursor of the previous page", pattern=CURSOR_PATTERN),
) -> SessionListPublic:
    """Live sessions, newest first, one page at a time (keyset pages: cheap at any depth)."""
    page = await ctx.store.list_sessions(_query(label, toolkit, status, parent, limit, cursor))
    return SessionListPublic(sessions=[SessionSummaryPublic.model_validate(s.public()) for s in page.sessions], next_cursor=encode_cursor(page.next_cursor),
                             total=page.total)


async def _record(store: SessionStore, session_id: str) -> SessionRecord:
    record = await store.get(session_id)
    if record is None:
        raise SessionNotFound(session_id)
    return record


def _summary(record: SessionRecord) -> SessionSummary:
    return SessionSummary(record.id, record.created, record.updated, record.status, record.calls, record.version,
                          record.config, list(record.tags))


async def _verdict(store: SessionStore, summary: SessionSummary) -> dict[str, Any] | None:
    """The last verdict entry of a judged session (None when it was never judged)."""
    if summary.status not in VERDICT_STATUSES:
        return None
    for entry in reversed(await store.history_tail(summary.id, VERDICT_LOOKBACK)):
        if entry.get("tool") == JUDGE_ENTRY:
            verdict = entry.get("verdict") or {}
            return {"status": entry.get("status"), "success": verdict.get("success"), "items": verdict.get("items", []),
                    "remaining": verdict.get("remaining", []), "engine": verdict.get("engine"),
                    "error": entry.get("error"), "task": entry.get("task")}
    return None


async def _node(store: SessionStore, summary: SessionSummary, depth: int, budget: list[int]) -> TreeNodePublic:
    children: list[TreeNodePublic] = []
    truncated = False
    if depth < TREE_DEPTH and budget[0] > 0:
        page = await store.list_sessions(SessionQuery((parent_tag(summary.id),), limit=TREE_CHILDREN))
        truncated = page.next_cursor is not None
        for child in sorted(page.sessions, key=lambda s: (s.created, s.id)):
            if budget[0] <= 0:
                truncated = True
                break
            budget[0] -= 1
            children.append(await _node(store, child, depth + 1, budget))
    return TreeNodePublic(**summary.public(), verdict=await _verdict(store, summary), children=children,
                          truncated=truncated)


@router.get("/{session_id}/tree", response_model=TreePublic, responses=problem_responses(404, 503))
async def tree(session_id: str, ctx: ContextDep) -> TreePublic:
    """The fork tree the session belongs to: its root (followed up through live parents) and every fork under
    it, oldest first, each with its labels, note, status and the judge's last verdict (a GATS turn: the base
    session and one branch per attempt, the feedback each attempt was given in its note)."""
    record = await _record(ctx.store, session_id)
    path = [record.id]
    while len(path) <= ANCESTORS and record.config.get("forked_from"):
        parent = await ctx.store.get(str(record.config["forked_from"]))
        if parent is None:
            break
        record = parent
        path.append(record.id)
    budget = [500]
    root = await _node(ctx.store, _summary(record), 0, budget)
    return TreePublic(session_id=session_id, root=root, path=path[::-1])


@router.get("/{session_id}/diff", response_model=DiffPublic, responses=problem_responses(404, 422, 503))
async def diff(session_id: str, ctx: ContextDep, version: int = Query(..., ge=1, le=MAX_INT64)) -> DiffPublic:
    """What version `version` changed: the JSON Patch (RFC 6902) from version `version - 1` to it."""
    record = await _record(ctx.store, session_id)
    if version > record.version:
        raise ProblemError(404, "Unknown version", f"version {version} does not exist yet: the session is at "
                           f"version {record.version}", "unknown-version")
    after = record.state if version == record.version else await ctx.store.state_at(session_id, version, record.version)
    before = await ctx.store.state_at(session_id, version - 1, record.version)
    patch = jsonpatch.make_patch(before, after).patch
    return DiffPublic(session_id=session_id, from_version=version - 1, to_version=version, patch=patch)
