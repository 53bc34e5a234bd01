#!/usr/bin/env python3
"""Open-world agents on a task set over the tool pool: `gecko openworld` (see benchmarks/openworld/README.md).

    python run_openworld.py --tasks benchmarks/openworld/tasks/<set> --agent select-execute --gecko-url auto
    python run_openworld.py --tasks <set> --agent planner-actor --faults moving-goalposts --gecko-url auto
    python run_openworld.py --tasks <set> --agent planner-actor --agent-llm gpt-4o-mini --gecko-url http://127.0.0.1:8000
"""

import sys

from gecko_cli.main import main

if __name__ == "__main__":
    sys.exit(main(["openworld", *sys.argv[1:]]))
