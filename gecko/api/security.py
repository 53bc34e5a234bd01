"""Pure-ASGI middleware: optional bearer-token check (constant-time).

The viewer (`/ui`) signs a browser in with the same key: `POST /ui/login` sets a cookie holding `ui_token(key)`
(an HMAC of the key, never the key itself), and this middleware accepts that cookie instead of the header for
read-only requests (GET, HEAD) under `COOKIE_PATHS` only. The cookie is HttpOnly and SameSite=Strict, and
grants nothing that changes a session.

Open paths (`/health`) pass without the key; the middleware records in the request state whether the key
was given (`AUTHORIZED_STATE`), so `/health` shows its details only to a caller who has the key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from http.cookies import SimpleCookie
from typing import Any

OPEN_PATHS = frozenset({"/health", "/ui/login"})
UI_COOKIE = "gecko_ui"
COOKIE_PATHS = ("/ui", "/sessions", "/run")
"""Path prefixes the viewer's cookie may read (`/run`: the run viewer's JSON, served by `gecko view` only)."""
COOKIE_METHODS = frozenset({"GET", "HEAD"})


def ui_token(api_key: str) -> str:
    """The viewer cookie's value for a key: an HMAC of a fixed text under the key."""
    return hmac.new(api_key.encode(), b"gecko viewer (read-only)", hashlib.sha256).hexdigest()


def key_matches(given: str, expected: str) -> bool:
    """Constant-time comparison of two keys."""
    return hmac.compare_digest(given.encode(), expected.encode())


def _cookie(headers: list[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # noqa: BLE001 - a malformed cookie header is no credential
                return ""
            morsel = jar.get(UI_COOKIE)
            return morsel.value if morsel is not None else ""
    return ""
AUTHORIZED_STATE = "gecko_authorized"
"""Request-state flag: the caller sent the right key (absent when the server has no key)."""


class ApiKeyMiddleware:
    """Reject requests without `Authorization: Bearer <key>` when a key is configured (see the module docstring
    for the viewer's cookie)."""

    def __init__(self, app: Any, api_key: str) -> None:
        self.app = app
        self._expected = f"Bearer {api_key}".encode()
        self._ui_token = ui_token(api_key).encode()

    def _cookie_allows(self, scope: dict) -> bool:
        path = scope.get("path", "")
        if scope.get("method") not in COOKIE_METHODS or not any(
                path == prefix or path.startswith(prefix + "/") for prefix in COOKIE_PATHS):
            return False
        return hmac.compare_digest(_cookie(scope.get("headers", [])).encode(), self._ui_token)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                given = value
                break
        authorized = hmac.compare_digest(given, self._expected)
        if authorized or self._cookie_allows(scope) or scope.get("path") in OPEN_PATHS:
            scope.setdefault("state", {})[AUTHORIZED_STATE] = authorized
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "GET" and scope.get("path", "").startswith("/ui"):
            await send({"type": "http.response.start", "status": 303,
                        "headers": [(b"location", b"/ui/login"), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        body = json.dumps({
            "type": "urn:gecko:problem:unauthorized", "title": "Unauthorized", "status": 401,
            "detail": "this server requires 'Authorization: Bearer <api key>' (the server's GECKO_API_KEY or --api-key-file)",
        }).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": body})
