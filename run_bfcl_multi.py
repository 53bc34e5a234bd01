#!/usr/bin/env python3
"""BFCL multi-turn with per-turn GATS, real execution and state sync: `gecko bfcl-multi` (see
benchmarks/bfcl/README.md and gats/turns.py).

    python run_gecko_server.py --schemas-dir data/bfcl/openapi/multi_turn --state-model rules &
    python run_bfcl_multi.py --category multi_turn_base --model scripted-oracle
    python run_bfcl_multi.py --category multi_turn_base --num-tasks 20 --model gpt-4o-mini --workers 8
"""

import sys

from gecko_cli.main import main

if __name__ == "__main__":
    sys.exit(main(["bfcl-multi", *sys.argv[1:]]))
