"""`python -m gecko.twin capture|learn …` (the same as `gecko twin …`)."""

import sys

from gecko.twin.cli import main

sys.exit(main())
