"""Liveness and configuration: `GET /health`, `GET /metrics`."""

from __future__ import annotations

import os
import time

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from gecko.api.deps import ContextDep
from gecko.api.models import HealthPublic
from gecko.api.security import AUTHORIZED_STATE
from gecko.pipeline.engines import role_endpoints
from utils.roles import SERVER_ROLES

router = APIRouter(tags=["health"])


@router.get("/health", response_model=HealthPublic, response_model_exclude_none=True)
async def health(request: Request, ctx: ContextDep) -> dict:
    """Status, models of every role (with the endpoint's capabilities, probed or declared), engines, store,
    toolkit counts and live workers (runners preflight on this).

    On a server with an API key, a caller without the key learns only `status` and `version`.
    """
    engines, settings = ctx.engines, ctx.settings
    if not getattr(request.state, AUTHORIZED_STATE, True):
        return {"status": "ok", "version": ctx.version}
    endpoints = role_endpoints(engines, settings)
    roles = {role.public: {"model": settings.role_model(role), "engine": engines.engine_of(role),
                           **({"endpoint": endpoints[role.name]} if role.name in endpoints else {})}
             for role in SERVER_ROLES}
    return {
        "status": "ok",
        "service": "gecko",
        "version": ctx.version,
        "pid": os.getpid(),
        "uptime_seconds": round(time.time() - ctx.started, 3),
        "roles": roles,
        "state_model_enabled": engines.state is not None,
        "offline": engines.llm_client is None,
        "store": ctx.store.backend,
        "toolkits": len(ctx.registry.toolkits),
        "toolkits_loaded": ctx.registry.toolkits.loaded(),
        "tools": ctx.registry.tool_count,
        "workers": {"configured": settings.workers, "live": await ctx.store.live_workers()},
        "sessions": await ctx.store.count(),
    }


@router.get("/metrics", response_class=PlainTextResponse)
async def metrics(ctx: ContextDep) -> str:
    """Prometheus text format: the counters and histograms of every worker summed (`gecko.telemetry.metrics`), and
    the gauges every worker sees alike (sessions in the store, tools loaded). A store that does not answer leaves
    out `gecko_sessions` and counts a store error: the scrape itself still answers, when it matters most."""
    try:
        sessions: int | None = await ctx.store.count()
    except ctx.store.unavailable_errors:
        sessions = None
        ctx.metrics.store_error()
    lines = [
        "# HELP gecko_tools Tools loaded.",
        "# TYPE gecko_tools gauge",
        f"gecko_tools {ctx.registry.tool_count}",
    ]
    if sessions is not None:
        lines += ["# HELP gecko_sessions Live sessions in the store.", "# TYPE gecko_sessions gauge",
                  f"gecko_sessions {sessions}"]
    return "\n".join(lines) + "\n" + ctx.metrics.render().decode()
