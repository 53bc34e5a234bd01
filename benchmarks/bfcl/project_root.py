"""Where bfcl-eval writes when its modules are imported, kept out of site-packages.

`bfcl_eval.constants.eval_config` makes `result/`, `score/` and `.file_locks/` under `BFCL_PROJECT_ROOT` as soon as
it is imported (by `bfcl_eval.utils` and by the memory classes' metaclass), and that root is site-packages by default:
read-only in an install, and no place for a run's files. Every import of those modules here goes through
`keep_out_of_site_packages` first.
"""

from __future__ import annotations

import os

from utils.paths import default_cache_dir

PROJECT_ROOT_VARIABLE = "BFCL_PROJECT_ROOT"


def keep_out_of_site_packages() -> None:
    """Point `BFCL_PROJECT_ROOT` at a directory of Gecko's per-user cache, unless the caller chose one."""
    os.environ.setdefault(PROJECT_ROOT_VARIABLE, str(default_cache_dir() / "bfcl-project"))
