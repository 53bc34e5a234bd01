"""The test tree is a package, so bare `pytest`, `python -m pytest` and a single file all import alike.

Without an `__init__.py`, pytest's default import mode puts the test directory itself on `sys.path`;
`tests/` on the path makes `tests/utils` (a namespace package) shadow the real `utils` package, and a
bare `pytest` run then fails to collect.
"""

from __future__ import annotations

from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent


def test_every_test_directory_is_a_package() -> None:
    missing = sorted(
        str(directory.relative_to(TESTS_DIR.parent))
        for directory in {path.parent for path in TESTS_DIR.rglob("*.py")}
        if not (directory / "__init__.py").is_file()
    )
    assert not missing, f"add an empty __init__.py to: {', '.join(missing)}"
