"""The viewer's page: one HTML shell and its static files (no CDN, nothing fetched from outside).

The page has two modes. `live` (the server's `/ui`): `static/app.js` renders, from Gecko's own read-only API
(`GET /sessions`, `/sessions/{id}`, `/history`, `/state`, `/diff`, `/tree`), the sessions list and one session
(calls, fork tree with verdicts, checklist, state at any version and its diff). `run` (`gecko view RUN_DIR`):
`static/run.js` renders a run directory's tasks table and one task's GATS attempts side by side (from
`GET /run` and `/run/tasks/{key}`). `static/dom.js` holds what both share; `gecko.api.routes.ui` serves them.
"""

from __future__ import annotations

import html
from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
_SCRIPT = "text/javascript; charset=utf-8"
STATIC_FILES: dict[str, str] = {"app.js": _SCRIPT, "dom.js": _SCRIPT, "run.js": _SCRIPT, "app.css": "text/css; charset=utf-8"}
"""The files under `/ui/static/` and their media types (nothing else is served from the directory)."""
PAGE_TITLE = "Gecko viewer"
MODES = ("live", "run")


def shell(title: str = PAGE_TITLE, static_prefix: str = "/ui/static", mode: str = "live") -> str:
    """The HTML page: the stylesheet, the script and an empty main element the script fills (`mode`: see the module
    docstring)."""
    if mode not in MODES:
        raise ValueError(f"unknown viewer mode {mode!r}; one of {', '.join(MODES)}")
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title>"
            f'<link rel="icon" href="data:,"><link rel="stylesheet" href="{static_prefix}/app.css"></head>'
            f'<body data-mode="{mode}"><header id="top"><a href="#/" class="brand">Gecko</a>'
            f'<span id="crumbs"></span></header><main id="app"><p class="muted">Loading…</p></main>'
            f'<script type="module" src="{static_prefix}/app.js"></script></body></html>')


def static_file(name: str) -> tuple[bytes, str] | None:
    """The bytes and media type of a static file of the page, or None for any other name."""
    media = STATIC_FILES.get(name)
    if media is None:
        return None
    return (STATIC_DIR / name).read_bytes(), media
