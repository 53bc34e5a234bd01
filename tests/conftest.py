"""Shared fixtures: test toolkits, app clients, a real redis-server, a real multi-worker Gecko."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from utils.procs import gecko_server, redis_server
from utils.settings import Settings

TESTS_DIR = Path(__file__).resolve().parent
TOOLKITS_DIR = TESTS_DIR / "data" / "openapi"
INVALID_DIR = TESTS_DIR / "data" / "invalid"


@pytest.fixture(autouse=True)
def _keep_umask() -> Iterator[None]:
    """CLIs under test set the process umask (`--umask`); give the next test the one it had."""
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)


@pytest.fixture
def toolkits_dir() -> Path:
    return TOOLKITS_DIR


@pytest.fixture
def make_client(tmp_path: Path):
    """Build a TestClient on the test toolkits (memory store unless told otherwise)."""
    clients: list[TestClient] = []

    def _make(**overrides) -> TestClient:
        from gecko.app import create_app

        values = {"schemas_dirs": [TOOLKITS_DIR], "workers": 1, "store": "memory", "state_dir": tmp_path,
                  "search_cache_dir": tmp_path / "search-cache", "toolkit_cache_dir": tmp_path / "toolkit-cache"}
        values.update(overrides)
        client = TestClient(create_app(Settings(**values)), base_url="http://127.0.0.1")  # a host Gecko answers
        client.__enter__()
        clients.append(client)
        return client

    yield _make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client) -> TestClient:
    return make_client()


@pytest.fixture
def session(client: TestClient) -> dict[str, str]:
    """Headers of a fresh session."""
    return {"X-Session-ID": client.get("/session-id").json()["session_id"]}


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A throwaway redis-server on a free loopback port."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (CI installs the Debian package redis-server)")
    with redis_server() as url:
        yield url


@pytest.fixture(scope="session")
def live_gecko_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The state dir of `live_gecko` (its SQLite store: a stdio MCP server on it shares the sessions)."""
    return tmp_path_factory.mktemp("gecko-state")


@pytest.fixture(scope="session")
def live_gecko(live_gecko_state: Path) -> Iterator[str]:
    """A real Gecko: uvicorn with 2 workers, SQLite store, on a free 127.0.0.1 port."""
    with gecko_server([TOOLKITS_DIR], workers=2, state_dir=live_gecko_state,
                      log_path=live_gecko_state / "server.log") as url:
        yield url
