"""`python -m gecko.verify`."""

import sys

from gecko.verify.cli import main

sys.exit(main())
