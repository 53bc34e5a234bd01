"""Required test infrastructure: a test that cannot get it skips on a developer's machine and FAILS in CI.

Required is everything `make setup` and `.ci/run` install: redis-server, the npm tools in `.npm-tools/`, chromium,
the official tools' venvs, the built toolkits, the packaged embedding model and every extra `make setup` installs
(camel, env, openenv, search, dense). With `CI` set to a true value (`CI=true`, as `.ci/run` and most CI services
set it), `require` turns the skip into a failure that says what is missing, so CI cannot pass by skipping.

Only explicitly optional things may skip in CI: a platform the test cannot run on, or a suite that runs in its own
CI step (the local model, `make test-local`) — those use `pytest.mark.skipif` directly, with the reason.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType
from typing import NoReturn

import pytest

CI_VARIABLE = "CI"
"""The variable that makes missing infrastructure a failure (true, 1 or yes, in any case)."""


def in_ci() -> bool:
    """Whether this run is CI (`CI=true`): missing required infrastructure fails instead of skipping."""
    return os.environ.get(CI_VARIABLE, "").strip().lower() in {"1", "true", "yes"}


def missing(reason: str) -> NoReturn:
    """Stop the test for want of required infrastructure: fail in CI, skip elsewhere (also at module level)."""
    if in_ci():
        pytest.fail(f"required infrastructure is missing ({CI_VARIABLE}=true, so this fails instead of skipping): "
                    f"{reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require(available: object, reason: str) -> None:
    """Go on when `available` is true; otherwise `missing(reason)`."""
    if not available:
        missing(reason)


def require_installed(name: str, reason: str) -> None:
    """Check that module `name` can be imported without importing it (cheap at collection for heavy packages whose
    tests import them later, or whose tests run them in a subprocess)."""
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    require(found, reason)


def require_module(name: str, reason: str) -> ModuleType:
    """Import `name` (what `pytest.importorskip` does, but failing in CI); `reason` says how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{reason} ({exc})")
