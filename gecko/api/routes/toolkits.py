"""`GET /toolkits`: what is loaded, with each tool's read/write kind."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query

from gecko.api.deps import MAX_INT64, ContextDep, toolkit_off_loop
from gecko.api.models import ToolkitPublic, ToolkitsPublic
from gecko.api.openapi import problem_responses
from gecko.api.problems import not_found
from gecko.toolkits.lazy import Toolkits, ToolkitUnavailable
from gecko.toolkits.resources import bindings_public

router = APIRouter(tags=["toolkits"])


@router.get("/toolkits", response_model=ToolkitsPublic, response_model_exclude_none=True,
            responses=problem_responses(422))
async def list_toolkits(
    ctx: ContextDep,
    limit: int = Query(1000, ge=1, le=100000),
    offset: int = Query(0, ge=0, le=MAX_INT64),
    tools: bool = Query(True, description="include each toolkit's tools"),
) -> dict:
    """The loaded toolkits, a page at a time, with each tool's read/write kind."""
    names = list(ctx.registry.toolkits)
    page = names[offset: offset + limit]
    if any(ctx.registry.toolkits.pending(name) is not None for name in page):
        # first use of toolkits registered from a prebuilt index: their documents are compiled in a thread, not on
        # the event loop every other request of this worker waits for
        await asyncio.to_thread(_load, ctx.registry.toolkits, page)
    items = []
    for name in page:
        try:
            tk = ctx.registry.toolkits[name]
        except KeyError:  # a document --skip-invalid left out when it was first loaded
            continue
        item = {"name": tk.name, "title": tk.title, "version": tk.version, "source": tk.source,
                "openapi": tk.openapi_version, "tool_count": len(tk.operations),
                "has_default_state": tk.default_state is not None}
        if tools:
            item["tools"] = [op.public() for op in tk.operations.values()]
        items.append(item)
    return {"total": len(ctx.registry.toolkits), "offset": offset, "toolkits": items}


def _load(toolkits: Toolkits, names: list[str]) -> None:
    """Load `names`; a failure is left for the lookup that follows to report (the registry remembers it)."""
    for name in names:
        try:
            toolkits[name]
        except (KeyError, ToolkitUnavailable):
            continue


@router.get("/toolkits/{name}", response_model=ToolkitPublic, responses=problem_responses(404))
async def get_toolkit(name: str, ctx: ContextDep) -> dict:
    """One toolkit with the full argument and response schema of each tool, and its place in the world model
    (`world`: the resource and action the rules engines bind it to; null when none)."""
    tk = await toolkit_off_loop(ctx.registry, name)
    if tk is None:
        raise not_found(f"unknown toolkit {name!r}", kind="unknown-toolkit")
    return {
        "name": tk.name, "title": tk.title, "description": tk.description, "source": tk.source,
        "default_state": tk.default_state,
        "tools": [{**op.public(), "description": op.description, "arguments_schema": op.args_schema,
                   "response_schema": op.response_schema, "world": bindings_public(op)}
                  for op in tk.operations.values()],
    }
