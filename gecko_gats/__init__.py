"""Gecko's public Python API: one import for users of the package (`pip install gecko-gats`).

```python
from gecko_gats import Simulator

with Simulator() as sim, sim.session() as session:        # the bundled example toolkits, in process
    reply = session.call("orders/get_product", {"sku": "ABC-1234"})
    print(reply.status, reply.body)
```

- `Simulator`: the server's pipeline in this process (no network): `session()` → `GeckoSession.call(tool, args)`
  returns the `ToolResponse` the HTTP server would.
- `SyncGeckoClient` / `GeckoClient`: clients of a running server (`gecko serve`), synchronous and async.
- `Settings`: every server setting (the same object `gecko serve` builds from flags, `GECKO_*` and `.env`).
- `GeckoEnv`: a gymnasium environment over Gecko sessions (the `env` extra).
- The pytest plugin (installed with the package) gives tests the fixtures `gecko_server`, `gecko_session` and
  `gecko_simulator` (see `gecko_gats.pytest_plugin`).

Everything not in `__all__` is private. Why a package of its own and not `gecko`: `gecko` is the server, which must
stay importable without the client side (its workers load it; `pyproject.toml`'s import contracts forbid it to
import `inference`), while this API spans both: the clients and `GeckoEnv` live on the client side.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gecko import __version__

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use (`__getattr__`)
    from gecko_gats._client import GeckoSession, SyncGeckoClient
    from gecko_gats._simulator import Simulator
    from inference.env.gym import GeckoEnv
    from inference.gecko import (
        GeckoClient,
        GeckoError,
        GeckoNotFoundError,
        GeckoRequestError,
        GeckoUnavailableError,
        ToolResponse,
    )
    from utils.settings import Settings

__all__ = [
    "GeckoClient", "GeckoEnv", "GeckoError", "GeckoNotFoundError", "GeckoRequestError", "GeckoSession",
    "GeckoUnavailableError", "Settings", "Simulator", "SyncGeckoClient", "ToolResponse", "__version__",
]
_HOMES = {
    "GeckoSession": "gecko_gats._client", "SyncGeckoClient": "gecko_gats._client", "Simulator": "gecko_gats._simulator",
    "GeckoEnv": "inference.env.gym", "GeckoClient": "inference.gecko", "GeckoError": "inference.gecko",
    "GeckoNotFoundError": "inference.gecko", "GeckoRequestError": "inference.gecko",
    "GeckoUnavailableError": "inference.gecko", "ToolResponse": "inference.gecko", "Settings": "utils.settings",
}
"""Public name → the module that defines it (imported on first use: `import gecko_gats` stays cheap, and the pytest
plugin, which every pytest run loads, costs nothing until a test uses its fixtures)."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'gecko_gats' has no attribute {name!r}")
    try:
        module = importlib.import_module(home)
    except ModuleNotFoundError as exc:  # GeckoEnv without gymnasium
        raise ImportError(f"gecko_gats.{name} needs {exc.name!r}, which is not installed: "
                          'pip install "gecko-gats[env]"') from exc
    value = getattr(module, name)
    globals()[name] = value
    return value
