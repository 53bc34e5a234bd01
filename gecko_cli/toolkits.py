"""`gecko toolkits`: build the benchmark toolkits from the pinned packages, then validate them once so the first
server start is quick (what `make toolkits` runs).

- BFCL single- and multi-turn: `scripts/build_toolkits.py` (a source checkout's developer script: stamped,
  rebuilt only when its inputs change), into `data/bfcl/openapi/`;
- tau2 mock toolkits: `benchmarks.taubench.mock_toolkits`, into `benchmarks/taubench/toolkits/`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence

from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.taubench.mock_toolkits import MOCK_DIR
from benchmarks.taubench.mock_toolkits import main as build_mock_toolkits
from gecko.cli import main as serve
from utils.paths import REPO_ROOT

BFCL_BUILD = REPO_ROOT / "scripts" / "build_toolkits.py"


def main(argv: Sequence[str] | None = None) -> int:
    """Build and validate; returns the exit code (0 done, 1 a build or validation failed). `gecko toolkits
    explain DOCUMENT|DIR…` prints how the world model binds each operation instead (`gecko.toolkits.explain`)."""
    if argv and argv[0] == "explain":
        from gecko.toolkits.explain import main as explain

        return explain(list(argv[1:]))
    parser = argparse.ArgumentParser(prog="gecko toolkits", description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="rebuild the BFCL toolkits even when up to date")
    args = parser.parse_args(argv)
    if not BFCL_BUILD.exists():
        print(f"error: {BFCL_BUILD} is missing: building the BFCL toolkits needs a source checkout; an installed "
              "Gecko reads them from GECKO_DATA_DIR (a data directory where `make toolkits` built them)", file=sys.stderr)
        return 1
    command = [sys.executable, str(BFCL_BUILD), *(["--force"] if args.force else [])]
    if subprocess.run(command, cwd=REPO_ROOT, check=False).returncode != 0:  # noqa: S603 - our own script
        return 1
    if build_mock_toolkits([]) != 0:
        return 1
    for directory in (OPENAPI_DIR / "single_turn", OPENAPI_DIR / "multi_turn", MOCK_DIR):
        if serve(["--check", "--log-level", "warning", "--schemas-dir", str(directory)]) != 0:
            return 1
    return 0
