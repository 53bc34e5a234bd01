"""`python -m gecko`: the Gecko server (same flags as `gecko serve` and `run_gecko_server.py`)."""

import sys

from gecko.cli import main

if __name__ == "__main__":
    sys.exit(main())
