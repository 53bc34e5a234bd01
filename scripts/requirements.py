#!/usr/bin/env python
"""Write requirements.txt from pyproject.toml's runtime dependencies (`--check`: fail if it is stale).

pyproject.toml is the one source of the dependency list; requirements.txt is generated for tools and
people that expect one. Run: `python scripts/requirements.py` (or `make requirements`).
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from utils.paths import REPO_ROOT

PYPROJECT = REPO_ROOT / "pyproject.toml"
REQUIREMENTS = REPO_ROOT / "requirements.txt"
HEADER = ("# Generated from pyproject.toml's [project.dependencies] by scripts/requirements.py; do not edit.\n"
          "# Prefer `make setup` (it also installs the dev extras and the pinned benchmark data packages).\n")


def render(pyproject: Path = PYPROJECT) -> str:
    """The requirements.txt text for `pyproject`."""
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    return HEADER + "".join(f"{line}\n" for line in dependencies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if requirements.txt is not up to date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not REQUIREMENTS.is_file() or REQUIREMENTS.read_text() != text:
            print(f"{REQUIREMENTS.name} is stale: run `python scripts/requirements.py`", file=sys.stderr)
            return 1
        return 0
    REQUIREMENTS.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
