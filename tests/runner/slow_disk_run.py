"""A real runner process for the interrupt test: the scripted benchmark with a slow disk (every checkpoint append
first touches `<marker>` and then takes a second), so that a SIGINT can land while a task is being recorded.

Usage: python -m tests.runner.slow_disk_run MARKER [runner flags …]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from benchmarks.runner import run_command
from benchmarks.runner.checkpoint import Ledger, LedgerEntry
from tests.runner.runner_support import ScriptedBenchmark


def main(argv: list[str]) -> int:
    """Run the scripted benchmark with `argv[1:]` after slowing every checkpoint append down."""
    marker = Path(argv[0])
    append = Ledger.append

    def slow_append(self: Ledger, entry: LedgerEntry) -> None:
        marker.touch()
        time.sleep(1.0)
        append(self, entry)

    Ledger.append = slow_append  # type: ignore[method-assign]
    return run_command(ScriptedBenchmark, argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
