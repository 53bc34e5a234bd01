"""The viewer at `/ui`: the page, its static files and the sign-in form (left out of the OpenAPI document:
they are HTML for people, not API operations; the data comes from the documented read-only endpoints).
`viewer_router` builds the same routes for `gecko view RUN_DIR` (the run mode of the one page).

With an API key, a browser signs in once at `/ui/login` with the key; the answer sets an HttpOnly,
SameSite=Strict cookie holding a token derived from the key, which the API key middleware accepts for
read-only requests (GET and HEAD) of the viewer and of the session endpoints it reads (`gecko.api.security`).
"""

from __future__ import annotations

import html
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs
from weakref import WeakKeyDictionary

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gecko.api.deps import get_context
from gecko.api.security import UI_COOKIE, key_matches, ui_token
from gecko.ui import PAGE_TITLE, shell, static_file

MAX_FORM_BYTES = 4096
LOGIN_FAILURES = 5
LOGIN_WINDOW_S = 60.0
"""A client with `LOGIN_FAILURES` wrong keys within `LOGIN_WINDOW_S` seconds gets 429 until the oldest leaves the window
(per worker: a guesser gets at most 5 tries a minute from each, where it got 513 a second)."""
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                                "form-action 'self'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # not no-referrer: a browser then sends `Origin: null`, which is refused
}
"""On every answer of the viewer: its own scripts only, never framed, no referrer sent to other sites."""
_NO_STORE = {"cache-control": "no-store", **SECURITY_HEADERS}


def _login_page(message: str = "", status: int = 200) -> HTMLResponse:
    note = f'<p class="error">{html.escape(message)}</p>' if message else ""
    return HTMLResponse(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Gecko viewer: sign in</title>'
        "<style>body{font:15px system-ui,sans-serif;margin:4rem auto;max-width:28rem;color:#1d2733}"
        "input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box;margin:.5rem 0}"
        "button{font:inherit;padding:.4rem 1rem}.error{color:#b3261e}</style></head><body>"
        "<h1>Gecko viewer</h1><p>This server needs its API key (the one given with <code>GECKO_API_KEY</code>).</p>"
        f'{note}<form method="post" action="/ui/login"><label>API key <input type="password" name="key" '
        'autocomplete="current-password" autofocus></label><button type="submit">Sign in</button></form>'
        "</body></html>", status_code=status, headers=_NO_STORE)


class LoginThrottle:
    """Failed sign-ins per client address in a sliding window."""

    def __init__(self, failures: int = LOGIN_FAILURES, window: float = LOGIN_WINDOW_S) -> None:
        self._failures = failures
        self._window = window
        self._seen: dict[str, deque[float]] = {}

    def wait(self, client: str) -> float:
        """Seconds `client` must wait before its next try (0: it may try now)."""
        now = time.monotonic()
        recent = self._seen.get(client)
        while recent and now - recent[0] > self._window:
            recent.popleft()
        if not recent:
            self._seen.pop(client, None)
            return 0.0
        return self._window - (now - recent[0]) if len(recent) >= self._failures else 0.0

    def failed(self, client: str) -> None:
        """Record a wrong key from `client` (the table keeps at most 10,000 clients: the oldest go first)."""
        if client not in self._seen and len(self._seen) >= 10_000:
            self._seen.pop(next(iter(self._seen)))
        self._seen.setdefault(client, deque()).append(time.monotonic())


async def _static(name: str) -> Response:
    """app.js, app.css and the script's modules."""
    found = static_file(name)
    if found is None:
        return Response(status_code=404, headers=SECURITY_HEADERS)
    body, media = found
    return Response(body, media_type=media, headers={"cache-control": "no-cache", **SECURITY_HEADERS})


async def _login_form() -> HTMLResponse:
    """The sign-in form (only needed when the server has an API key)."""
    return _login_page()


def viewer_router(api_key_of: Callable[[Request], str], *, mode: str = "live", title: str = PAGE_TITLE) -> APIRouter:
    """The viewer's routes under `/ui`: the page (in `mode`: `live` sessions, or `run` for `gecko view`), its static
    files and the sign-in form, which checks the key `api_key_of(request)` gives ("" when there is none)."""
    router = APIRouter(prefix="/ui", include_in_schema=False)
    page_html = shell(title, mode=mode)
    throttles: WeakKeyDictionary[Any, LoginThrottle] = WeakKeyDictionary()  # one per app serving this router

    async def page() -> HTMLResponse:
        """The viewer (a single page; the data comes from read-only JSON endpoints)."""
        return HTMLResponse(page_html, headers=_NO_STORE)

    async def login(request: Request) -> Response:
        """Check the key; on success set the viewer's read-only cookie and go to the viewer."""
        expected = api_key_of(request)
        if not expected:
            return RedirectResponse("/ui", status_code=303, headers=SECURITY_HEADERS)
        client = request.client.host if request.client else ""
        throttle = throttles.setdefault(request.app, LoginThrottle())
        wait = throttle.wait(client)
        if wait > 0:
            page = _login_page(f"Too many wrong keys: try again in {int(wait) + 1} seconds.", 429)
            page.headers["Retry-After"] = str(int(wait) + 1)
            return page
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_FORM_BYTES:
                return _login_page("The form is too large.", 413)
        given = (parse_qs(raw.decode("utf-8", "replace")).get("key") or [""])[0]
        if not key_matches(given, expected):
            throttle.failed(client)
            return _login_page("That is not this server's API key.", 401)
        response = RedirectResponse("/ui", status_code=303, headers=SECURITY_HEADERS)
        response.set_cookie(UI_COOKIE, ui_token(expected), httponly=True, samesite="strict", path="/")
        return response

    router.add_api_route("", page, methods=["GET"], response_class=HTMLResponse)
    router.add_api_route("/", page, methods=["GET"], response_class=HTMLResponse)
    router.add_api_route("/static/{name}", _static, methods=["GET"])
    router.add_api_route("/login", _login_form, methods=["GET"], response_class=HTMLResponse)
    router.add_api_route("/login", login, methods=["POST"])
    return router


def _server_key(request: Request) -> str:
    key = get_context(request).settings.api_key
    return key.get_secret_value() if key is not None else ""


router = viewer_router(_server_key)
"""The server's viewer (live sessions)."""
