"""Task ids as users give them: on the command line (commas or spaces) or in a file (one per line)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def split_ids(raw: Iterable[str]) -> tuple[str, ...]:
    """Ids from command-line values, each of which may hold several ids separated by commas."""
    return tuple(part.strip() for value in raw for part in value.split(",") if part.strip())


def read_ids_file(path: Path) -> list[str]:
    """Task ids from a text file: one per line; blank lines and `#` comments are ignored.

    Raises:
        ValueError: The file cannot be read.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read the ids file {path}: {exc.strerror or exc}") from None
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]
