"""Where things live: the repository root, its data directory and the per-user state and cache directories."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
EXAMPLE_TOOLKITS_DIR = DATA_DIR / "examples" / "openapi"


def default_state_dir() -> Path:
    """Per-user state directory (sessions DB, caches): `$XDG_STATE_HOME/gecko` or `~/.local/state/gecko`."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gecko"


def default_cache_dir() -> Path:
    """Per-user cache directory (content-addressed data any server may reuse): `$XDG_CACHE_HOME/gecko` or
    `~/.cache/gecko`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gecko"
