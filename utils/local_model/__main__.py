"""`python -m utils.local_model serve [--model GGUF | --package NAME]`; see `utils.local_model.cli`."""

import sys

from utils.local_model.cli import main

sys.exit(main())
