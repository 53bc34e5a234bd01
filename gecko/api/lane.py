"""`GeckoApp`: the FastAPI application, with the tool route's requests answered through a short lane.

A tool call (`POST /{toolkit}/{operationId}`, `tools.ToolCallRoute`) is the request a simulation server answers
most. Through the framework it passes seven middleware layers, the router's walk and two exception wrappers
before the endpoint runs, which cost a rules-engine call about a tenth of its CPU. This app sends such a request
through Gecko's own middleware (the same instances' classes and arguments, in the same order: request id and
metrics, host check, API key), then straight to the route's endpoint, and answers an exception with the handler
the app registered for it (`app.exception_handlers`, the same lookup by class), so it gets the same response.

Which requests take the lane is the router's own decision: the first route of the app's list that fully matches
the request is the tool route (the routes before it, MCP's, are asked first). Every other request, and every
other scope type, goes through the framework as before.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from gecko.api.routes.tools import ToolCallRoute


class GeckoApp(FastAPI):
    """FastAPI, with the tool route's requests answered through the short lane (see the module docstring)."""

    _lane: ASGIApp | None = None
    _ahead: tuple[list[BaseRoute], ToolCallRoute] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            child = self._lane_match(scope)
            if child is not None:
                scope["app"] = self
                scope.update(child)
                if self._lane is None:
                    self._lane = self._build_lane()
                await self._lane(scope, receive, send)
                return
        await super().__call__(scope, receive, send)

    def _lane_match(self, scope: Scope) -> dict[str, Any] | None:
        """The tool route's child scope when it is the route the router would pick for `scope`, else None."""
        if self._ahead is None:
            routes = self.router.routes
            position = next((i for i, r in enumerate(routes) if isinstance(r, ToolCallRoute)), None)
            if position is None:
                return None
            self._ahead = (list(routes[:position]), routes[position])  # type: ignore[assignment]
        before, route = self._ahead
        match, child = route.matches(scope)
        if match is not Match.FULL or any(r.matches(scope)[0] is Match.FULL for r in before):
            return None
        return child

    def _build_lane(self) -> ASGIApp:
        lane: ASGIApp = self._endpoint
        for middleware in reversed(self.user_middleware):
            cls, args, kwargs = middleware
            lane = cls(lane, *args, **kwargs)
        return lane

    async def _endpoint(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self._ahead is not None
        request = Request(scope, receive)
        try:
            response = await self._ahead[1].endpoint(request)
        except Exception as exc:
            handler = self._handler_for(exc)
            if handler is None:
                raise
            response = await handler(request, exc)
        await response(scope, receive, send)

    def _handler_for(self, exc: Exception) -> Any:
        """The exception handler the app registered for `exc`'s class or its nearest base (as Starlette looks up)."""
        for cls in type(exc).__mro__:
            handler = self.exception_handlers.get(cls)
            if handler is not None:
                return handler
        return None
