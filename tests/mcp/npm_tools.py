"""Where `make npm-tools` put the pinned third-party MCP peers (MCP Inspector, reference servers, Node 22)."""

from __future__ import annotations

import os
import shutil

from tests.infra import missing
from utils.paths import REPO_ROOT

NPM_BIN = REPO_ROOT / ".npm-tools" / "node_modules" / ".bin"


def npm_env() -> dict[str, str]:
    """The environment with the pinned Node first on PATH (the tools' `#!/usr/bin/env node` finds it)."""
    return {**os.environ, "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def npm_tool(name: str) -> str:
    """Absolute path of an installed tool; skips the test when `make npm-tools` has not run (no npm)."""
    path = NPM_BIN / name
    if not path.exists() or shutil.which("node", path=str(NPM_BIN)) is None:
        missing(f"{name} is not installed: run `make npm-tools` (needs npm; CI installs it)")
    return str(path)
