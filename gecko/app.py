"""The FastAPI application factory: `create_app(settings)` (workers get it through `gecko.workers.WorkerApp`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from importlib.metadata import PackageNotFoundError, version

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from gecko.api.deps import GeckoContext
from gecko.api.docs_pages import docs_router, openapi_router
from gecko.api.hosts import HostCheckMiddleware, accepted_hosts
from gecko.api.lane import GeckoApp
from gecko.api.openapi import gecko_openapi
from gecko.api.problems import ProblemError, problem_response
from gecko.api.routes import compat, health, search, session_views, sessions, toolkits, tools, ui
from gecko.api.security import ApiKeyMiddleware
from gecko.mcp.http import McpHttpEndpoint, mcp_routes
from gecko.pipeline.engines import build_engines, close_engines, probe_endpoints
from gecko.pipeline.faults import FaultPolicies
from gecko.pipeline.runner import CallRunner
from gecko.pipeline.stages import JudgeFailure
from gecko.sessions.model import SessionBusy, SessionNotFound, StateUnreadable, VersionConflict, VersionGone
from gecko.sessions.store import open_store
from gecko.telemetry import GeckoMetrics, TelemetryMiddleware
from gecko.toolkits.lazy import ToolkitUnavailable
from gecko.toolkits.loader import load_toolkits
from gecko.toolkits.registry import ToolkitRegistry, ToolNotFound
from gecko.toolkits.search import SearchUnavailable, ToolIndex
from gecko.upstream.errors import NoUpstream, UpstreamError
from gecko.upstream.pool import UpstreamPool
from utils.faults import load_policy
from utils.jsonutil import json_pointer
from utils.ratelog import EveryInterval
from utils.schema.instance import UnsatisfiableSchema
from utils.settings import Settings

log = logging.getLogger("gecko")
HEARTBEAT_SECONDS = 5.0


def _version() -> str:
    try:
        return version("gecko-gats")
    except PackageNotFoundError:
        return "0.0.0+local"


def build_context(settings: Settings, registry: ToolkitRegistry | None = None) -> GeckoContext:
    """Toolkits (loaded now unless given), engines, store and runner of one worker; the store opens in `serving`."""
    if registry is None:
        registry = load_toolkits(settings.schemas_dirs, skip_invalid=settings.skip_invalid,
                                 cache_dir=settings.toolkit_cache_dir, strict_validation=settings.strict_validation,
                                 strict=settings.strict_documents, warn=False,
                                 max_nodes=settings.max_toolkit_nodes)
    engines = build_engines(settings, registry)
    store = open_store(settings.store, sqlite_path=settings.sqlite_path(), ttl=settings.session_ttl,
                       history_limit=settings.history_limit, max_versions=settings.max_versions,
                       checkpoint_every=settings.checkpoint_every, pool_size=settings.redis_max_connections)
    metrics = GeckoMetrics()
    if engines.llm_client is not None:
        engines.llm_client.add_usage_sink(metrics.llm_usage)
    faults = FaultPolicies(load_policy(settings.faults) if settings.faults else None, on_injection=metrics.fault_injected)
    upstreams = UpstreamPool(registry, settings.upstream_timeout_s, frozenset(settings.allow_upstream))
    runner = CallRunner(store, engines, upstreams=upstreams, faults=faults)
    return GeckoContext(settings, registry, store, engines, runner, time.time(), _version(), ToolIndex(
        registry, dense=settings.dense_search, cache_dir=settings.search_cache_dir,
        default_mode=settings.search_mode), metrics)


@contextlib.asynccontextmanager
async def serving(ctx: GeckoContext) -> AsyncIterator[None]:
    """Open the store and keep it tidy while serving; at the end drain deferred updates and close everything."""
    await ctx.store.open()
    try:
        await ctx.store.heartbeat()
    except ctx.store.unavailable_errors as exc:  # a full disk: serve (writes answer 503) and retry every heartbeat
        log.warning("session store unavailable at start-up: %s; serving, writes answer 503 until it is back", exc)
    await probe_endpoints(ctx.engines, ctx.settings)
    task = asyncio.create_task(_housekeeping(ctx))
    warming = asyncio.create_task(_warm_search(ctx))
    try:
        yield
    finally:
        warming.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await warming
        await ctx.runner.drain()
        if ctx.runner.upstreams is not None:
            await ctx.runner.upstreams.aclose()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await close_engines(ctx.engines)
        await ctx.store.close()


def create_app(settings: Settings, registry: ToolkitRegistry | None = None) -> FastAPI:
    """Build the app; toolkits are loaded now (or taken from `registry`), the store opens at start-up."""
    ctx = build_context(settings, registry)
    mcp = McpHttpEndpoint(ctx)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with serving(ctx), mcp.run():
            yield

    app = GeckoApp(title="Gecko", version=ctx.version, lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None,  # served by openapi_router: built once
                  description="Tool-call simulation server: validates calls, synthesizes responses, keeps state.")
    app.state.gecko = ctx
    app.openapi = lambda: gecko_openapi(app, ctx)  # type: ignore[method-assign]
    # first: `POST /mcp/{toolkit}` has the shape of the tool route `POST /{toolkit}/{operationId}`
    app.router.routes.extend(mcp_routes(mcp))
    # then the tool route, which leaves the viewer its `POST /ui/login` (same shape)
    early = [openapi_router(app.openapi), docs_router("Gecko"), ui.router]
    app.router.routes.append(tools.ToolCallRoute(shadowed_by=[route for router in early for route in router.routes]))
    for router in (*early, health.router, search.router, toolkits.router, compat.router, session_views.router,
                   sessions.router, tools.fallback_router):
        app.include_router(router)
    app.state.gecko_routes = tools.own_routes([m.router for m in (ui, health, search, toolkits, compat, session_views,
                                                                          sessions)])
    _install_error_handlers(app, ctx.store.unavailable_errors)
    if settings.api_key is not None and settings.api_key.get_secret_value():
        app.add_middleware(ApiKeyMiddleware, api_key=settings.api_key.get_secret_value())
    # outermost: a request for another host name (DNS rebinding) reaches nothing, not even the key check
    app.add_middleware(HostCheckMiddleware, allowed=accepted_hosts(settings.host, settings.allowed_hosts))
    app.add_middleware(TelemetryMiddleware, metrics=ctx.metrics)  # around everything: every answer has an id, counted
    return app


async def _warm_search(ctx: GeckoContext) -> None:
    """Build the tool search index in a thread while the worker already serves (the first search then waits less)."""
    try:
        await asyncio.to_thread(ctx.search.warm)
    except SearchUnavailable as exc:
        log.info("tool search is off: %s", exc)


async def _housekeeping(ctx: GeckoContext) -> None:
    last_purge = 0.0
    said = EveryInterval(60.0)
    while True:
        try:
            await ctx.store.heartbeat()
            if time.time() - last_purge > ctx.settings.sweep_seconds:
                last_purge = time.time()
                await ctx.store.purge_expired()
        except ctx.store.unavailable_errors as exc:
            if said.due() is not None:
                log.warning("session store housekeeping failed: %s", exc)
        except Exception:  # noqa: BLE001 - housekeeping must survive a transient store error
            log.exception("session store housekeeping failed")
        await asyncio.sleep(HEARTBEAT_SECONDS)


def _install_error_handlers(app: FastAPI, store_errors: tuple[type[Exception], ...]) -> None:
    @app.exception_handler(ProblemError)
    async def _problem(request: Request, exc: ProblemError) -> Response:
        return exc.response()

    @app.exception_handler(SessionNotFound)
    async def _no_session(request: Request, exc: SessionNotFound) -> Response:
        return problem_response(404, "Unknown session", f"no live session {exc.args[0]!r} (never created, deleted "
                                "or expired); create one with GET /session-id or POST /sessions", "unknown-session")

    @app.exception_handler(ToolkitUnavailable)
    async def _unloadable(request: Request, exc: ToolkitUnavailable) -> Response:
        return problem_response(503, "Toolkit cannot be loaded", f"{exc}; fix the document and restart (or start "
                                "with --skip-invalid to leave it out)", "toolkit-unavailable")

    @app.exception_handler(ToolNotFound)
    async def _no_tool(request: Request, exc: ToolNotFound) -> Response:
        hint = f"; did you mean: {', '.join(exc.suggestions)}" if exc.suggestions else ""
        return problem_response(404, "Unknown tool", f"{exc}{hint}", "unknown-tool", suggestions=exc.suggestions)

    unavailable_said = EveryInterval(60.0)  # a full disk fails every request: one line a minute, not one each

    async def _store_unavailable(request: Request, exc: Exception) -> Response:
        skipped = unavailable_said.due()
        if skipped is not None:
            log.warning("session store unavailable on %s %s: %s%s", request.method, request.url.path, exc,
                        f" ({skipped} more since the last line)" if skipped else "")
        request.app.state.gecko.metrics.store_error()
        return problem_response(503, "Session store unavailable", f"the session store did not answer ({exc}); "
                                "retry shortly", "store-unavailable", headers={"Retry-After": "1"})

    for error in store_errors:
        app.add_exception_handler(error, _store_unavailable)

    @app.exception_handler(VersionGone)
    async def _no_version(request: Request, exc: VersionGone) -> Response:
        return problem_response(404, "Unknown version", str(exc), "unknown-version")

    @app.exception_handler(SessionBusy)
    async def _busy(request: Request, exc: SessionBusy) -> Response:
        return problem_response(503, "Session busy", str(exc), "session-busy", headers={"Retry-After": "1"})

    @app.exception_handler(StateUnreadable)
    async def _unreadable(request: Request, exc: StateUnreadable) -> Response:
        return problem_response(422, "State too deep", str(exc), "state-too-deep")

    @app.exception_handler(VersionConflict)
    async def _conflict(request: Request, exc: VersionConflict) -> Response:
        return problem_response(409, "State conflict", f"{exc}; retry the request", "version-conflict")

    @app.exception_handler(JudgeFailure)
    async def _judge_failed(request: Request, exc: JudgeFailure) -> Response:
        return problem_response(502, "Judge failed", f"no verdict could be produced: {exc}", "judge-failed",
                                retryable=True)

    @app.exception_handler(NoUpstream)
    async def _no_upstream(request: Request, exc: NoUpstream) -> Response:
        return problem_response(409, "No upstream", str(exc), "no-upstream")

    @app.exception_handler(UpstreamError)
    async def _upstream_failed(request: Request, exc: UpstreamError) -> Response:
        return problem_response(502, "Upstream failed", f"the real service did not answer: {exc}", "upstream-failed",
                                retryable=True)

    @app.exception_handler(UnsatisfiableSchema)
    async def _unsatisfiable(request: Request, exc: UnsatisfiableSchema) -> Response:
        return problem_response(500, "Response schema unsatisfiable", str(exc), "unsatisfiable-response-schema")

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        # a body error points into the body document (RFC 6901); a parameter error says where: /query/offset
        errors = [{"pointer": json_pointer(e["loc"][1:] if e["loc"][:1] == ("body",) else e["loc"]),
                   "keyword": e["type"], "message": e["msg"]} for e in exc.errors()]
        status = 400 if any(e["type"] == "json_invalid" for e in exc.errors()) else 422
        detail = " ".join(f"{e['pointer'] or 'body'}: {e['message']}." for e in errors)
        return problem_response(status, "Invalid request", detail, "invalid-request", errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        return problem_response(exc.status_code, "HTTP error", str(exc.detail), f"http-{exc.status_code}",
                                headers=getattr(exc, "headers", None))

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, exc: ClientDisconnect) -> Response:
        log.debug("client left during %s %s before sending its whole body", request.method, request.url.path)
        return problem_response(408, "Request incomplete", "the client closed the connection (or was closed for "
                                "being too slow) before sending the whole request", "request-incomplete")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem_response(500, "Internal error", "the server failed on this request; see the server log",
                                "internal-error")
