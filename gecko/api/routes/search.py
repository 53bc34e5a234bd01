"""`GET /tools/search`: find tools among every loaded toolkit by what they do (BM25, dense or hybrid; see
gecko.toolkits.search)."""

from __future__ import annotations

import asyncio
import difflib
from typing import Literal

from fastapi import APIRouter, Query

from gecko.api.deps import ContextDep
from gecko.api.models import ToolSearchPublic
from gecko.api.openapi import problem_responses
from gecko.api.problems import ProblemError, not_found
from gecko.toolkits.search import MAX_K, MAX_QUERY_CHARS, Mode, SearchIndexBuilding, SearchUnavailable

router = APIRouter(tags=["toolkits"])


@router.get("/tools/search", response_model=ToolSearchPublic, responses=problem_responses(404, 422, 501, 503))
async def search_tools(
    ctx: ContextDep,
    q: str = Query(..., min_length=1, max_length=MAX_QUERY_CHARS, description="what the tool should do, in words"),
    k: int = Query(10, ge=1, le=MAX_K, description="how many tools to return"),
    toolkit: list[str] | None = Query(None, description="search only these toolkits (repeatable)"),
    access: Literal["read", "write"] | None = Query(None, description="only tools of this read/write kind"),
    mode: Mode | None = Query(None, description="the ranking: `bm25` (words), `dense` (sentence embeddings) or "
                                                "`hybrid` (both, fused by reciprocal rank); default `bm25` (the "
                                                "server's `--search-mode`)"),
) -> ToolSearchPublic:
    """The `k` tools that best match `q`, best first: each with its toolkit, name, app and source (pool
    toolkits), read/write kind, summary, the route to call it and its score. BM25 leaves out tools that share no
    word with the query, so fewer than `k` may come back; dense and hybrid rank every tool. A `mode` this server
    cannot offer (no embedding model installed, or `--no-dense-search`) is a 501 saying why. While the dense index
    is being built (the first search on a pool whose tool embeddings are not cached yet: minutes on a large pool),
    a search that needs it answers 503 with `Retry-After` and the build's progress; `mode=bm25` answers at once."""
    if not q.strip():
        raise ProblemError(422, "Invalid query", "q must contain at least one word", "invalid-query")
    if toolkit:
        unknown = [name for name in toolkit if ctx.registry.toolkit(name) is None]
        if unknown:
            near = difflib.get_close_matches(unknown[0], list(ctx.registry.toolkits), n=5, cutoff=0.5)
            raise not_found(f"unknown toolkit {unknown[0]!r}" + (f"; did you mean: {', '.join(near)}" if near else ""),
                            kind="unknown-toolkit", suggestions=near)
        toolkit = [ctx.registry.toolkit(name).name for name in toolkit]  # type: ignore[union-attr]
    try:
        hits = await asyncio.to_thread(ctx.search.search, q, k, toolkits=toolkit, access=access, mode=mode)
    except SearchUnavailable as exc:
        raise ProblemError(501, "Tool search unavailable", str(exc), "search-unavailable") from None
    except SearchIndexBuilding as exc:
        raise ProblemError(503, "Search index being built", str(exc), "search-index-building",
                           headers={"Retry-After": str(exc.retry_after)}) from None
    return ToolSearchPublic.model_validate({"query": q, "k": k, "engine": mode or ctx.search.engine,
                                            "indexed_tools": ctx.search.size,
                                            "dense_unavailable": ctx.search.dense_unavailable,
                                            "hits": [hit.public() for hit in hits]})
