#!/usr/bin/env python3
"""Start the Gecko server. See `python run_gecko_server.py --help`."""

import sys

from gecko.cli import main

if __name__ == "__main__":
    sys.exit(main())
