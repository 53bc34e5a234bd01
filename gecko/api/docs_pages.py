"""`/openapi.json`, built once, and `/docs` (Swagger UI) and `/redoc`, their scripts pinned by version and by hash.

The document lists every loaded tool (35 MB for 10,000 operations): it is built and serialized once, in a thread,
on the first request, and every later request gets the same bytes (it was rebuilt per request: 6 s each, with
`/health` stalled meanwhile).

FastAPI's defaults load `swagger-ui-dist@5` from a CDN: whatever version the CDN serves that day, run with the
page's origin. Here each file is one exact npm release, and the browser refuses it unless its SHA-384 is the one
below (Subresource Integrity), computed from the npm registry's tarball of that release.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from utils.jsonutil import dumps_compact

CDN = "https://cdn.jsdelivr.net/npm"
SWAGGER_JS = (f"{CDN}/swagger-ui-dist@5.35.0/swagger-ui-bundle.js",
              "sha384-gjRm0bEPMeTmMh5jT2cHccIwCUZSTd8YC+j0d0sXw0MdGEfScduGpSyF3ZSSLkX9")
SWAGGER_CSS = (f"{CDN}/swagger-ui-dist@5.35.0/swagger-ui.css",
               "sha384-WlYgdmXYOOBWL5apwjDEZwN+U3HmXSSu5R6V5aGxEcf7z+KuRNwBhoxKVN1i3D5I")
REDOC_JS = (f"{CDN}/redoc@2.5.4/bundles/redoc.standalone.js",
            "sha384-w447zOpYfw/1Tv/5AK9NfHTlQIqE3RVR6KY62jCyy9zNDgO64cMwGGP1Fj0zJVf5")
_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": "frame-ancestors 'none'; object-src 'none'; base-uri 'none'"}


def _pinned(tag: str, asset: tuple[str, str]) -> str:
    url, digest = asset
    if tag == "script":
        return f'<script src="{url}" integrity="{digest}" crossorigin="anonymous"></script>'
    return f'<link rel="stylesheet" href="{url}" integrity="{digest}" crossorigin="anonymous">'


def docs_router(title: str, openapi_url: str = "/openapi.json") -> APIRouter:
    """The two pages (left out of the OpenAPI document)."""
    router = APIRouter(include_in_schema=False)
    name = html.escape(title)
    swagger = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{name} - Swagger UI</title>'
               f'{_pinned("link", SWAGGER_CSS)}</head><body><div id="swagger-ui"></div>{_pinned("script", SWAGGER_JS)}'
               f'<script>SwaggerUIBundle({{url: "{openapi_url}", dom_id: "#swagger-ui", deepLinking: true}});</script>'
               "</body></html>")
    redoc = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{name} - ReDoc</title></head>'
             f'<body><redoc spec-url="{openapi_url}"></redoc>{_pinned("script", REDOC_JS)}</body></html>')

    @router.get("/docs", response_class=HTMLResponse)
    async def docs() -> HTMLResponse:
        return HTMLResponse(swagger, headers=_HEADERS)

    @router.get("/redoc", response_class=HTMLResponse)
    async def redoc_page() -> HTMLResponse:
        return HTMLResponse(redoc, headers=_HEADERS)

    return router


def openapi_router(build: Callable[[], dict[str, Any]], url: str = "/openapi.json") -> APIRouter:
    """`GET url`: the document `build()` makes, serialized once (concurrent first requests wait for one build)."""
    router = APIRouter(include_in_schema=False)
    built: list[bytes] = []
    lock = asyncio.Lock()

    async def document() -> bytes:
        if not built:
            async with lock:
                if not built:
                    built.append(await asyncio.to_thread(lambda: dumps_compact(build()).encode()))
        return built[0]

    @router.get(url)
    async def openapi_json() -> Response:
        return Response(await document(), media_type="application/json")

    return router
