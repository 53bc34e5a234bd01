"""`python -m gecko_cli`: same as the `gecko` console script."""

import sys

from gecko_cli.main import main

sys.exit(main())
