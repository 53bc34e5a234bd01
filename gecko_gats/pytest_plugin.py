"""pytest fixtures that give an agent's tests a Gecko in one line (registered by the package's `pytest11` entry
point, so installing `gecko-gats` is enough; `-p no:gecko` turns them off).

```python
def test_my_agent_books_a_pet(gecko_session):
    reply = gecko_session.call("petstore/createPet", {"name": "Rex"})
    assert reply.ok
```

- `gecko_server`: a real Gecko (`python -m gecko`, one worker) on a free loopback port for the whole test session;
  its base URL.
- `gecko_session`: a fresh session on `gecko_server` for one test (a `GeckoSession`), deleted afterwards.
- `gecko_simulator`: an in-process `Simulator` for one test (no server; fastest).
- `gecko_toolkits`: what they serve: the `gecko_toolkits` ini option (paths, relative to the ini file), else
  Gecko's bundled example toolkits. Override the fixture to choose per directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported by the fixtures that use them: every pytest run loads this plugin, few use it
    from gecko_gats._client import GeckoSession
    from gecko_gats._simulator import Simulator

INI_TOOLKITS = "gecko_toolkits"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(INI_TOOLKITS, type="paths", default=[],
                  help="directories of OpenAPI documents the gecko_* fixtures serve (default: Gecko's examples)")


@pytest.fixture(scope="session")
def gecko_toolkits(pytestconfig: pytest.Config) -> list[Path]:
    """Toolkit directories the Gecko fixtures serve."""
    from utils.paths import EXAMPLE_TOOLKITS_DIR

    given = pytestconfig.getini(INI_TOOLKITS)
    return [Path(p) for p in given] if given else [EXAMPLE_TOOLKITS_DIR]


@pytest.fixture(scope="session")
def gecko_server(gecko_toolkits: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running Gecko for the test session; its base URL."""
    from utils.procs import gecko_server as start

    state = tmp_path_factory.mktemp("gecko-server")
    with start(gecko_toolkits, workers=1, state_dir=state, log_path=state / "server.log") as url:
        yield url


@pytest.fixture
def gecko_session(gecko_server: str) -> Iterator[GeckoSession]:
    """A fresh session on `gecko_server`, deleted after the test."""
    from gecko_gats._client import SyncGeckoClient

    with SyncGeckoClient(gecko_server) as client, client.session() as session:
        yield session


@pytest.fixture
def gecko_simulator(gecko_toolkits: list[Path]) -> Iterator[Simulator]:
    """Gecko in process for one test (`gecko_simulator.session().call(tool, arguments)`)."""
    from gecko_gats._simulator import Simulator

    with Simulator(gecko_toolkits) as simulator:
        yield simulator
