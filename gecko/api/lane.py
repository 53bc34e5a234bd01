"""`GeckoApp`: the FastAPI application, with tool calls answered through a short lane.

Tool calls are the requests a simulation server answers most: `POST /{toolkit}/{operationId}`
(`tools.ToolCallRoute`) and MCP's `POST /mcp[/{toolkit}]`. Through the framework each passes seven middleware
layers, the router's walk and two exception wrappers before its endpoint runs, which cost a rules-engine call
about a tenth of its CPU. This app sends such a request through Gecko's own middleware (the same classes with the
same arguments, in the same order: request id and metrics, host check, API key), then straight to the route's
endpoint, and answers an exception with the handler the app registered for it (`app.exception_handlers`, the same
lookup by class), so it gets the same response.

Which requests take the lane is the router's own decision: the routes at the head of the app's list, up to the
tool route (MCP's, then the tool route), are asked in order, and the first that fully matches the request takes
it. A request none of them matches goes through the framework as before, as does every other method and scope
type.
"""

from __future__ import annotations

import inspect
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gecko.api.routes.tools import ToolCallRoute

LANE_ROUTE = "gecko.lane_route"
"""Scope key: the route a request in the lane goes to."""


class GeckoApp(FastAPI):
    """FastAPI, with tool calls answered through the short lane (see the module docstring)."""

    _lane: ASGIApp | None = None
    _lane_routes: list[Route] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            route, child = self._lane_match(scope)
            if route is not None:
                scope["app"] = self
                scope.update(child)
                scope[LANE_ROUTE] = route
                if self._lane is None:
                    self._lane = self._build_lane()
                await self._lane(scope, receive, send)
                return
        await super().__call__(scope, receive, send)

    def _lane_match(self, scope: Scope) -> tuple[Route | None, Scope]:
        """The lane's route the router would give `scope` to, with its child scope; (None, {}) if none."""
        if self._lane_routes is None:
            self._lane_routes = _head_routes(self.router.routes)
        for route in self._lane_routes:
            match, child = route.matches(scope)
            if match is Match.FULL:
                return route, child
        return None, {}

    def _build_lane(self) -> ASGIApp:
        lane: ASGIApp = self._endpoint
        for middleware in reversed(self.user_middleware):
            cls, args, kwargs = middleware
            lane = cls(lane, *args, **kwargs)
        return lane

    async def _endpoint(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = scope[LANE_ROUTE]
        if isinstance(route, ToolCallRoute):  # a request handler
            request = Request(scope, receive)
            try:
                response = await route.endpoint(request)
            except Exception as exc:
                response = await self._handled(request, exc)
            await response(scope, receive, send)
            return
        started = False  # an ASGI endpoint (MCP's): a handler answers only what it has not begun to answer

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await route.app(scope, receive, sending)
        except Exception as exc:
            if started:
                raise
            response = await self._handled(Request(scope, receive), exc)
            await response(scope, receive, send)

    async def _handled(self, request: Request, exc: Exception) -> Any:
        """The response of the exception handler the app registered for `exc`'s class or its nearest base (the
        lookup Starlette makes); `exc` again when there is none."""
        for cls in type(exc).__mro__:
            handler = self.exception_handlers.get(cls)
            if handler is not None:
                response = handler(request, exc)  # Gecko's handlers are coroutines; Starlette allows plain ones too
                return await response if inspect.isawaitable(response) else response
        raise exc


def _head_routes(routes: list[BaseRoute]) -> list[Route]:
    """The routes up to and including the tool route (none if the app has no tool route)."""
    for position, route in enumerate(routes):
        if isinstance(route, ToolCallRoute):
            head = [r for r in routes[:position + 1] if isinstance(r, Route)]
            return head if len(head) == position + 1 else []  # a route of another kind ahead: no lane
    return []
