#!/usr/bin/env python3
"""Start-up time of the Gecko server: launch to healthy with every worker live, cold and warm (issue 33 item 8).

For each set of toolkits (`bundled`: the shipped examples; `bfcl`: the BFCL single-turn toolkits `gecko toolkits`
built; `pool`: the open-world pool when built), the server is started twice on 2 workers with a fresh state dir each
time: `cold` with an empty toolkit cache (every document is validated and compiled) and `warm` with the cache the
first start wrote (each toolkit is read back). `--check` times the same load without serving. Prints one JSON object with the load
average before and after.

Run: `python perf/startup.py [--sets bundled,bfcl,pool] [--workers 2]`. It starts the server of the checkout its
`utils` is imported from: to time another worktree, run it there with `PYTHONPATH=<that worktree>` (a script's own
directory, `perf/`, comes first on `sys.path`, so an editable install's checkout wins otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from utils.paths import DATA_DIR, EXAMPLE_TOOLKITS_DIR
from utils.procs import child_cwd, gecko_server

SETS = {"bundled": EXAMPLE_TOOLKITS_DIR, "bfcl": DATA_DIR / "bfcl" / "openapi" / "single_turn",
        "pool": DATA_DIR / "pool" / "toolkits"}


def _documents(directory: Path) -> int:
    return sum(1 for p in directory.iterdir() if p.suffix in (".json", ".yaml", ".yml"))


def _serve(directory: Path, cache: Path, workers: int) -> float:
    """Seconds from launch to healthy (every worker live) with `cache` as the toolkit cache."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gecko-startup-") as state, gecko_server(
            [directory], workers=workers, state_dir=Path(state), timeout=1800,
            extra=["--toolkit-cache-dir", str(cache), "--search-cache-dir", str(cache / "search")]):
        return round(time.perf_counter() - started, 2)


def _check(directory: Path, cache: Path) -> float:
    """Seconds of `gecko serve --check` (load, validate, compile, synthesize every response once)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gecko", "--check", "--schemas-dir", str(directory), "--toolkit-cache-dir",
                    str(cache), "--log-level", "error"], check=True, capture_output=True, cwd=child_cwd())
    return round(time.perf_counter() - started, 2)


def measure(directory: Path, workers: int) -> dict[str, Any]:
    """Cold and warm start of one set of toolkits."""
    with tempfile.TemporaryDirectory(prefix="gecko-toolkit-cache-") as cache:
        cold = _serve(directory, Path(cache), workers)
        warm = _serve(directory, Path(cache), workers)
        warm_check = _check(directory, Path(cache))
    return {"documents": _documents(directory), "workers": workers, "cold_seconds_to_healthy": cold,
            "warm_seconds_to_healthy": warm, "warm_check_seconds": warm_check}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="bundled,bfcl", help=f"comma-separated, of: {', '.join(SETS)}")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    result: dict[str, Any] = {"load_average": os.getloadavg(), "cpus": os.cpu_count()}
    for name in [s for s in args.sets.split(",") if s]:
        directory = SETS[name]
        if not directory.is_dir():
            result[name] = {"skipped": f"{directory} does not exist (`gecko toolkits` / `make pool` builds it)"}
            continue
        result[name] = measure(directory, args.workers)
    result["load_average_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
