"""Liveness and configuration: `GET /health`, `GET /metrics`."""

from __future__ import annotations

import os
import time

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from gecko.api.deps import ContextDep
from gecko.pipeline.engines import llm_metrics_text

router = APIRouter(tags=["health"])


@router.get("/health")
async def health(ctx: ContextDep) -> dict:
    """Status, models of every role, engines, store, toolkit counts and live workers (runners preflight on this)."""
    engines = ctx.engines
    settings = ctx.settings
    roles = {
        "validator": {"model": settings.validation_model,
                      "engine": engines.semantic.engine if engines.semantic else "none"},
        "responder": {"model": settings.response_model, "engine": engines.synthesizer.engine},
        "state": {"model": settings.state_model, "engine": engines.state.engine if engines.state else "none"},
        "judge": {"model": settings.judge_model, "engine": engines.judge.engine},
    }
    return {
        "status": "ok",
        "service": "gecko",
        "version": ctx.version,
        "pid": os.getpid(),
        "uptime_seconds": round(time.time() - ctx.started, 3),
        "roles": roles,
        "state_model_enabled": engines.state is not None,
        "offline": all(r["engine"] in ("rules", "none") for r in roles.values()),
        "store": ctx.store.backend,
        "toolkits": len(ctx.registry.toolkits),
        "tools": ctx.registry.tool_count,
        "workers": {"configured": settings.workers, "live": await ctx.store.live_workers()},
        "sessions": await ctx.store.count(),
    }


@router.get("/metrics", response_class=PlainTextResponse)
async def metrics(ctx: ContextDep) -> str:
    """Prometheus text format (this worker's view, plus store-wide session count)."""
    lines = [
        "# HELP gecko_sessions Live sessions in the store.",
        "# TYPE gecko_sessions gauge",
        f"gecko_sessions {await ctx.store.count()}",
        "# HELP gecko_tools Tools loaded.",
        "# TYPE gecko_tools gauge",
        f"gecko_tools {ctx.registry.tool_count}",
    ]
    return "\n".join(lines) + "\n" + llm_metrics_text(ctx.engines)
