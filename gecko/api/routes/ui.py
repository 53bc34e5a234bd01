"""The viewer at `/ui`: the page, its static files and the sign-in form (left out of the OpenAPI document:
they are HTML for people, not API operations; the data comes from the documented read-only endpoints).
`viewer_router` builds the same routes for `gecko view RUN_DIR` (the run mode of the one page).

With an API key, a browser signs in once at `/ui/login` with the key; the answer sets an HttpOnly,
SameSite=Strict cookie holding a token derived from the key, which the API key middleware accepts for
read-only requests (GET and HEAD) of the viewer and of the session endpoints it reads (`gecko.api.security`).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gecko.api.deps import get_context
from gecko.api.security import UI_COOKIE, key_matches, ui_token
from gecko.ui import PAGE_TITLE, shell, static_file

MAX_FORM_BYTES = 4096
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                                "form-action 'self'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
"""On every answer of the viewer: its own scripts only, never framed, no referrer sent."""
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

    async def page() -> HTMLResponse:
        """The viewer (a single page; the data comes from read-only JSON endpoints)."""
        return HTMLResponse(page_html, headers=_NO_STORE)

    async def login(request: Request) -> Response:
        """Check the key; on success set the viewer's read-only cookie and go to the viewer."""
        expected = api_key_of(request)
        if not expected:
            return RedirectResponse("/ui", status_code=303, headers=SECURITY_HEADERS)
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_FORM_BYTES:
                return _login_page("The form is too large.", 413)
        given = (parse_qs(raw.decode("utf-8", "replace")).get("key") or [""])[0]
        if not key_matches(given, expected):
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
