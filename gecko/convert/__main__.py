"""`python -m gecko.convert`: see `gecko.convert.cli`."""

import sys

from gecko.convert.cli import main

sys.exit(main())
