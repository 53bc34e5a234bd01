#!/usr/bin/env python3
"""tau2-bench airline or retail in-repo, with or without GATS hybrid mode: `gecko tau2` (see
benchmarks/taubench/README.md).

    python run_taubench.py --domain airline --num-tasks 5                      # offline: scripted oracle + user
    python run_taubench.py --domain airline --agent-llm <alias> --user-llm <alias> --gecko-url URL
    python run_taubench.py --domain airline --resume results/tau2/<run dir>    # rerun untested, finish the rest

`--gecko-url auto` (the default) starts a local Gecko on the mock toolkits with the offline rules engines.
"""

import sys

from gecko_cli.main import main

if __name__ == "__main__":
    sys.exit(main(["tau2", *sys.argv[1:]]))
