"""Remember which document bytes already passed openapi-spec-validator, so restarts skip it.

A marker file per sha256 of the document (plus the validator version) under the state dir; writing a
marker is atomic (create-then-rename), so several processes can share the directory.
"""

from __future__ import annotations

import hashlib
import os
from importlib.metadata import version
from pathlib import Path


def _validator_tag() -> str:
    return f"osv-{version('openapi-spec-validator')}"


class ValidationCache:
    """Marker files named by content hash; `None` directory disables caching."""

    def __init__(self, directory: Path | None, mode: str = "auto") -> None:
        self._dir = directory / "validated" / f"{_validator_tag()}-{mode}" if directory else None

    @staticmethod
    def key(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    def known_valid(self, key: str) -> bool:
        return self._dir is not None and (self._dir / key).exists()

    def remember(self, key: str) -> None:
        if self._dir is None:
            return
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            tmp = self._dir / f".{key}.{os.getpid()}"
            tmp.touch()
            os.replace(tmp, self._dir / key)
        except OSError:
            pass  # a read-only state dir only costs re-validation next start
