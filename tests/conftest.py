"""Shared fixtures: test toolkits, app clients, a real redis-server, a real multi-worker Gecko."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.infra import require
from utils.procs import gecko_server, redis_server
from utils.settings import Settings

TESTS_DIR = Path(__file__).resolve().parent
TOOLKITS_DIR = TESTS_DIR / "data" / "openapi"
INVALID_DIR = TESTS_DIR / "data" / "invalid"
ALL_SEEDS = "--all-seeds"
INFRA_MODULE = "infra.py"


def pytest_configure(config: pytest.Config) -> None:
    """Children get a Ctrl-C: a shell without job control starts a background job (`make test &`, a CI runner's) with
    SIGINT ignored, which every child inherits and Python then keeps ignoring, so the tests that interrupt a run would
    see it finish. A handler (unlike SIG_IGN) is not inherited: the children start with the default."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(ALL_SEEDS, action="store_true",
                     help="property tests marked `seeds` run every seed (`make test-latest`); default: their quick ones")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`@pytest.mark.seeds(quick=..., full=...)` parametrizes `seed`: the quick seeds, or all with `--all-seeds`."""
    marker = metafunc.definition.get_closest_marker("seeds")
    if marker is not None:
        every = metafunc.config.getoption(ALL_SEEDS)
        metafunc.parametrize("seed", list(marker.kwargs["full"] if every else marker.kwargs["quick"]))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A skip raised by tests/infra.py is listed (`-rs`) at the test that needed the infrastructure, not in infra.py."""
    report = yield
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and Path(str(longrepr[0])).name == INFRA_MODULE:
        path, line, _ = item.location
        report.longrepr = (path, (line or 0) + 1, longrepr[2])
    return report


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
    require(shutil.which("redis-server"), "redis-server is not installed (CI installs the Debian package redis-server)")
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
