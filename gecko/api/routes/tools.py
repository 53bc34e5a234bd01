"""Tool calls: `POST /{toolkit}/{operationId}` with the arguments as the JSON body, or the document's
own `{method} [/{toolkit}]{path}`. Unknown tool → 404 with the nearest names; wrong method → 405."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Match, Route, get_route_path
from starlette.types import Scope

from gecko.api.arguments import arguments_from_request
from gecko.api.deps import (
    MESSAGE_HEADER,
    SESSION_HEADER,
    get_context,
    message_header,
    read_json,
    require_session_header,
    toolkit_off_loop,
)
from gecko.api.problems import ProblemError, problem_response
from gecko.api.responses import FastJSONResponse
from gecko.pipeline.runner import CallOutcome
from gecko.toolkits.model import Operation
from gecko.toolkits.registry import MethodNotAllowed, ToolNotFound
from utils.httpstatus import is_success

fallback_router = APIRouter(tags=["tools"])
"""The documents' own paths: a catch-all, included last."""
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
TOOL_ERROR_HEADER = "X-Gecko-Tool-Error"
"""Set (`true`) on an error response of the simulated API itself (a declared 404 for a record the session's world
does not have), as opposed to Gecko refusing the call (problem+json)."""
FAULT_HEADER = "X-Gecko-Fault"
"""On a call the state controller intervened in: the injection record as compact JSON (never in the body)."""


def _declared_headers(operation: Operation, outcome: CallOutcome) -> dict[str, str]:
    """The success response's declared headers Gecko can fill: `Location` of a created record (its item path)."""
    declared = {h.lower(): h for h in operation.success_headers}
    resource = operation.world.resource if operation.world is not None else None
    if "location" not in declared or resource is None or resource.action != "create":
        return {}
    record_id = outcome.body.get(resource.id_field) if isinstance(outcome.body, dict) else None
    if record_id is None:
        return {}
    parents = {argument: outcome.body.get(field_name) for argument, field_name in resource.parents}
    path = re.sub(r"\{([^}/]+)\}", lambda m: quote(str(parents.get(m.group(1)) or m.group(0)), safe="{}"),
                  operation.path.rstrip("/"))
    return {declared["location"]: f"{path}/{quote(str(record_id), safe='')}"}


def _render(operation: Operation, outcome: CallOutcome, session_id: str) -> Response:
    headers = {SESSION_HEADER: session_id, "X-Gecko-State-Version": str(outcome.state_version)}
    if outcome.state_pending:
        headers["X-Gecko-State"] = "pending"
    headers["X-Gecko-Semantic"] = outcome.semantic_outcome
    if outcome.fault is not None:
        headers[FAULT_HEADER] = json.dumps(outcome.fault, separators=(",", ":"))  # ASCII: a header is latin-1
    if outcome.service_error is not None:  # an injected fault answers like a failing service would
        error = outcome.service_error
        return problem_response(error.status, error.title, error.detail, error.slug,
                                headers={**headers, **error.headers()}, tool=operation.tool_name)
    if outcome.upstream is not None:
        headers["X-Gecko-Source"] = "upstream"
        return FastJSONResponse(outcome.http_body(), status_code=outcome.upstream.status, headers=headers)
    if is_success(outcome.status):
        headers.update(_declared_headers(operation, outcome))
        if not operation.success_has_body:  # 204, or a success that declares no content
            return Response(status_code=outcome.status, headers=headers)
        return FastJSONResponse(outcome.http_body(), status_code=outcome.status, headers=headers)
    if outcome.tool_error:
        headers[TOOL_ERROR_HEADER] = "true"
        return FastJSONResponse(outcome.body, status_code=outcome.status, headers=headers)
    return problem_response(
        422, "Invalid tool arguments", outcome.detail(), "invalid-arguments", headers=headers,
        tool=operation.tool_name, errors=outcome.errors(),
    )


async def _call(request: Request, operation: Operation, arguments: Any) -> Response:
    session_id = require_session_header(request.headers.get(SESSION_HEADER))
    message = message_header(request.headers.get(MESSAGE_HEADER))
    outcome = await get_context(request).runner.run(session_id, operation, arguments, message=message)
    return _render(operation, outcome, session_id)


async def _serve_operation_id(request: Request) -> Response:
    params = request.path_params
    return await call_by_operation_id(params["toolkit"], params["operation_id"], request)


class ToolCallRoute(Route):
    """`POST /{toolkit}/{operationId}`, the hot path: a plain Starlette route on the app's own route list.

    Not an included router: FastAPI matches an included router's routes twice (once to pick the router, once inside
    it) and walks every router included before it, which cost more than the rest of a rules-engine call's routing.
    This route sits right after MCP's and answers exactly the requests it answered when it was included after the
    viewer's and the documentation's routers: a POST on two segments that none of the routes `shadowed_by` takes
    (`POST /ui/login`). Anything else (another method, another shape) is no match here, and the routes after it
    answer as before. No FastAPI parameter solving; Gecko's OpenAPI document lists every loaded tool as its own
    operation instead (`gecko.api.openapi`).
    """

    def __init__(self, shadowed_by: list[BaseRoute]) -> None:
        super().__init__("/{toolkit}/{operation_id}", _serve_operation_id, methods=["POST"], include_in_schema=False)
        self._shadowing = [route.path_regex for route in shadowed_by
                           if isinstance(route, Route) and "POST" in (route.methods or ())]
        """Path patterns of the POST routes that take their requests first (a POST route matches by its path)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope["method"] != "POST":
            return Match.NONE, {}
        match, child = super().matches(scope)
        if match is Match.FULL and self._shadowing:
            path = get_route_path(scope)
            if any(pattern.match(path) for pattern in self._shadowing):
                return Match.NONE, {}
        return match, child


async def call_by_operation_id(toolkit: str, operation_id: str, request: Request) -> Response:
    """Call a tool by operationId; the JSON body is the arguments object."""
    registry = get_context(request).registry
    await toolkit_off_loop(registry, toolkit)  # loaded (off the loop on its first use) before `get` looks in it
    try:
        operation = registry.get(toolkit, operation_id)
    except ToolNotFound as not_found:
        return await _call_by_path(request, fallback=not_found)
    arguments = await read_json(request, default={})
    if not isinstance(arguments, dict):
        raise ProblemError(422, "Invalid tool arguments", "the arguments must be a JSON object",
                           "invalid-arguments", tool=operation.tool_name,
                           errors=[{"pointer": "", "keyword": "type", "message": "The arguments must be an object.",
                                    "source": "syntactic"}])
    return await _call(request, operation, arguments)


@fallback_router.api_route("/{full_path:path}", methods=ALL_METHODS, include_in_schema=False)
async def call_by_path(full_path: str, request: Request) -> Response:
    if request.method == "POST":  # `/{toolkit}/{operationId}` for an operationId with `/` in it (`issues/create`)
        operation = _operation_named(request)
        if operation is not None:
            return await call_by_operation_id(operation.toolkit, operation.operation_id, request)
    return await _call_by_path(request)


def _operation_named(request: Request) -> Operation | None:
    toolkit, _, name = request.url.path.strip("/").partition("/")
    if "/" not in name:
        return None
    try:
        return get_context(request).registry.get(toolkit, name)
    except ToolNotFound:
        return None


def _suggestions(request: Request) -> list[str]:
    """For a 404 on `/{toolkit}/{name…}`: the toolkit's callable names nearest to `name`."""
    registry = get_context(request).registry
    head, _, rest = request.url.path.strip("/").partition("/")
    toolkit = registry.toolkit(head)
    return registry.near(toolkit, rest) if toolkit is not None and rest else []


async def _call_by_path(request: Request, fallback: ToolNotFound | None = None) -> Response:
    registry = get_context(request).registry
    try:
        if registry.match_loads(request.url.path):  # a toolkit's first use (a prebuilt index): off the loop
            match = await asyncio.to_thread(registry.match_path, request.method, request.url.path)
        else:
            match = registry.match_path(request.method, request.url.path)
    except MethodNotAllowed as exc:
        if fallback is not None and request.method == "POST":
            raise fallback from None
        raise _method_not_allowed(request, exc.allowed) from exc
    if match is None:
        allowed = _gecko_methods(request)
        if fallback is not None and not allowed:  # a path of Gecko's own with another method: 405, not 404
            raise fallback
        if allowed or _operation_at(request) is not None:
            raise _method_not_allowed(request, allowed)
        raise ToolNotFound(f"no tool or endpoint at {request.method} {request.url.path}", _suggestions(request))
    operation = match.operation
    body = None
    if request.method not in ("GET", "HEAD", "DELETE", "OPTIONS") or request.headers.get("content-length"):
        body = await read_json(request, default=None) if await _has_body(request) else None
    if body is None and operation.body_mode != "none" and operation.body_required:
        raise ProblemError(422, "Invalid tool arguments", f"{request.method} {operation.path} needs a request body",
                           "invalid-arguments", tool=operation.tool_name, errors=[{
                               "pointer": "", "keyword": "required", "message": "The request body is required.",
                               "source": "syntactic"}])
    arguments = arguments_from_request(operation, match.path_params, request.query_params, request.headers, body)
    return await _call(request, operation, arguments)


def _method_not_allowed(request: Request, allowed: list[str]) -> ProblemError:
    """405 listing every method the path takes: a tool's `POST /{toolkit}/{operationId}` included."""
    methods = set(allowed) | ({"POST"} if _operation_at(request) is not None else set())
    listed = ", ".join(sorted(methods))
    return ProblemError(405, "Method not allowed", f"{request.method} is not allowed on {request.url.path}; "
                        f"allowed: {listed}", "method-not-allowed", headers={"Allow": listed})


def _operation_at(request: Request) -> Operation | None:
    """The tool whose `/{toolkit}/{operationId}` is this request's path, if any."""
    parts = request.url.path.strip("/").split("/")
    if len(parts) != 2:
        return None
    try:
        return get_context(request).registry.get(*parts)
    except ToolNotFound:
        return None


def _gecko_methods(request: Request) -> list[str]:
    """The methods Gecko's own routes serve on this request's path (empty when none matches it)."""
    path = request.url.path
    return sorted({method for regex, methods in request.app.state.gecko_routes if regex.match(path)
                   for method in methods})


def own_routes(routers: list[APIRouter]) -> list[tuple[re.Pattern[str], set[str]]]:
    """(path pattern, methods) of every route of `routers`: what `_gecko_methods` answers 405s from."""
    return [(route.path_regex, set(route.methods or ())) for router in routers for route in router.routes
            if isinstance(route, APIRoute)]


async def _has_body(request: Request) -> bool:
    declared = request.headers.get("content-length")
    if declared is not None:
        return declared != "0"
    return "chunked" in request.headers.get("transfer-encoding", "")
