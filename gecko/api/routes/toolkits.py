"""`GET /toolkits`: what is loaded, with each tool's read/write kind."""

from __future__ import annotations

from fastapi import APIRouter, Query

from gecko.api.deps import MAX_INT64, ContextDep
from gecko.api.models import ToolkitPublic, ToolkitsPublic
from gecko.api.openapi import problem_responses
from gecko.api.problems import not_found
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
    items = []
    for name in page:
        tk = ctx.registry.toolkits[name]
        item = {"name": tk.name, "title": tk.title, "version": tk.version, "source": tk.source,
                "openapi": tk.openapi_version, "tool_count": len(tk.operations),
                "has_default_state": tk.default_state is not None}
        if tools:
            item["tools"] = [op.public() for op in tk.operations.values()]
        items.append(item)
    return {"total": len(names), "offset": offset, "toolkits": items}


@router.get("/toolkits/{name}", response_model=ToolkitPublic, responses=problem_responses(404))
async def get_toolkit(name: str, ctx: ContextDep) -> dict:
    """One toolkit with the full argument and response schema of each tool, and its place in the world model
    (`world`: the resource and action the rules engines bind it to; null when none)."""
    tk = ctx.registry.toolkit(name)
    if tk is None:
        raise not_found(f"unknown toolkit {name!r}", kind="unknown-toolkit")
    return {
        "name": tk.name, "title": tk.title, "description": tk.description, "source": tk.source,
        "default_state": tk.default_state,
        "tools": [{**op.public(), "description": op.description, "arguments_schema": op.args_schema,
                   "response_schema": op.response_schema, "world": bindings_public(op)}
                  for op in tk.operations.values()],
    }
