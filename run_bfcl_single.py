#!/usr/bin/env python3
"""BFCL single-turn with GATS against a running Gecko: `gecko bfcl` (see benchmarks/bfcl/README.md).

    python run_gecko_server.py --schemas-dir data/bfcl/openapi/single_turn --state-model none &
    python run_bfcl_single.py --category simple_python --num-tasks 20 --model scripted-noisy --max-retries 2
    python run_bfcl_single.py --category all --model gpt-4o-mini --workers 16
    python run_bfcl_single.py --category all --model gpt-4o-mini --resume results/bfcl/<run dir>
"""

import sys

from gecko_cli.main import main

if __name__ == "__main__":
    sys.exit(main(["bfcl", *sys.argv[1:]]))
