"""Pure-ASGI middleware: optional bearer-token check (constant-time)."""

from __future__ import annotations

import hmac
import json
from typing import Any

OPEN_PATHS = frozenset({"/health"})


class ApiKeyMiddleware:
    """Reject requests without `Authorization: Bearer <key>` when a key is configured."""

    def __init__(self, app: Any, api_key: str) -> None:
        self.app = app
        self._expected = f"Bearer {api_key}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                given = value
                break
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        body = json.dumps({
            "type": "urn:gecko:problem:unauthorized", "title": "Unauthorized", "status": 401,
            "detail": "this server requires 'Authorization: Bearer <api key>' (set with --api-key / GECKO_API_KEY)",
        }).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": body})
