"""`python -m gecko.mcp`: see `gecko.mcp.stdio`."""

import sys

from gecko.mcp.stdio import main

sys.exit(main())
