"""Headless Chromium for the viewer's browser tests and render benchmark (Debian's `chromium` package, driven
with Playwright's Python client; no browser is downloaded)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM_ENV = "GECKO_CHROMIUM"
"""Path of the Chromium binary to use (default: `chromium` or `chromium-browser` on PATH)."""
CHROMIUM_ARGS = ("--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu")
"""Flags for running as root in a container without a GPU or a large /dev/shm."""


def chromium_path() -> Path | None:
    """The Chromium binary to drive, or None when none is installed (`apt-get install chromium`)."""
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        return Path(configured) if Path(configured).is_file() else None
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else None
