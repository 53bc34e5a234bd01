"""`TelemetryMiddleware`: the request id and the request metrics, as a pure ASGI middleware (it adds one header
and a few counter writes to each request; no body is read or buffered).

The id is the client's `X-Request-ID` when it is a plausible id (1-128 of `A-Za-z0-9._:-`), else a new one (32 hex
digits: a random prefix drawn once per middleware, so once per worker, and a counter; not a fresh `uuid4`, whose
`urandom` call cost more than the rest of the middleware). It is echoed in the response's `X-Request-ID`, set for
the request's log records and kept in `request.state.request_id`, from where the tool route writes it into the
call's history entry.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from gecko.telemetry.logs import reset_request_id, set_request_id
from gecko.telemetry.metrics import GeckoMetrics, route_kind

REQUEST_ID_HEADER = "X-Request-ID"
_HEADER_KEY = REQUEST_ID_HEADER.lower().encode()
_VALID_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,128}$")
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def client_request_id(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The client's request id when it sent a valid one."""
    for key, value in headers:
        if key == _HEADER_KEY and _VALID_ID.match(value):
            return value.decode()
    return None


class RequestIds:
    """New request ids, unique across processes: a random 64-bit prefix drawn at creation and a 64-bit counter."""

    def __init__(self) -> None:
        self._prefix = uuid.uuid4().hex[:16]
        self._counter = itertools.count()

    def new(self) -> str:
        return f"{self._prefix}{next(self._counter):016x}"


class TelemetryMiddleware:
    """Request id and request metrics for every HTTP request (other scopes pass through)."""

    def __init__(self, app: App, metrics: GeckoMetrics) -> None:
        self.app = app
        self.metrics = metrics
        self._ids = RequestIds()  # made in the worker (the app is built there), so every worker draws its own prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = client_request_id(scope.get("headers") or []) or self._ids.new()
        scope.setdefault("state", {})["request_id"] = request_id
        token = set_request_id(request_id)
        status = 500  # a response never started: the server failed

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), (_HEADER_KEY, request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self.metrics.observe_request(route_kind(scope.get("path", "")), status, time.perf_counter() - started)
            reset_request_id(token)
