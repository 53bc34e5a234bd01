"""Where things live: bundled package data, the data directory, results, and the per-user state and cache
directories.

- Bundled data (the example toolkits) ships inside the packages and is found with `importlib.resources`, so an
  installed Gecko needs no checkout.
- The data directory holds what is built, not shipped (the BFCL toolkits of `gecko toolkits`, the open-world pool
  of `gecko pool build`): `$GECKO_DATA_DIR` if set, else a source checkout's `data/`, else
  `$XDG_DATA_HOME/gecko` (`~/.local/share/gecko`).
- `REPO_ROOT` is the directory above the packages: a checkout's root, or `site-packages` of an install. Use it only
  for a checkout's developer files (`scripts/`, `.venv-*`), after `is_checkout()`.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR_VARIABLE = "GECKO_DATA_DIR"
"""Environment variable naming the data directory (read once, when this module is imported)."""


def is_checkout() -> bool:
    """True when the packages run from a source checkout (editable install or `python run_*.py`), not a wheel."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "utils" / "paths.py").is_file()


def bundled(*parts: str) -> Path:
    """A directory or file shipped inside the `utils` package (`utils/_data/…`), as a real path.

    Wheels install unzipped, so the resource is a file on disk; a zipped import would raise here, not later.
    """
    resource = files("utils").joinpath("_data", *parts)
    path = Path(str(resource))
    if not path.exists():
        raise FileNotFoundError(f"bundled data {'/'.join(parts)!r} is missing from the installed package ({path})")
    return path


def default_data_dir() -> Path:
    """`$GECKO_DATA_DIR`, else the checkout's `data/`, else `$XDG_DATA_HOME/gecko` or `~/.local/share/gecko`."""
    given = os.environ.get(DATA_DIR_VARIABLE)
    if given:
        return Path(given).expanduser().resolve()
    if is_checkout():
        return REPO_ROOT / "data"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "gecko"


def results_dir() -> Path:
    """Where benchmark runs go by default: `./results` of the working directory."""
    return Path.cwd() / "results"


DATA_DIR = default_data_dir()
EXAMPLE_TOOLKITS_DIR = bundled("examples", "openapi")
"""The example toolkits the server loads when no `--schemas-dir` is given (shipped in the package)."""


STATE_DIR_NAME = ".gecko"
"""The state directory's name in the working directory (the default `--state-dir`)."""


def default_state_dir() -> Path:
    """The working directory's state directory (sessions DB, LLM cache, toolkit validation cache): `<cwd>/.gecko`,
    so that each project's `/ui` shows its own sessions and `rm -r .gecko` cleans up after it."""
    return Path.cwd() / STATE_DIR_NAME


def user_state_dir() -> Path:
    """Per-user state directory (what is shared by every project: packaged local models):
    `$XDG_STATE_HOME/gecko` or `~/.local/state/gecko`."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gecko"


def default_cache_dir() -> Path:
    """Per-user cache directory (content-addressed data any server may reuse): `$XDG_CACHE_HOME/gecko` or
    `~/.cache/gecko`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gecko"
