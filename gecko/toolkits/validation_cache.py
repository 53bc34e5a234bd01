"""Remember which documents already loaded, so restarts skip validation (the slow part of a cold start).

A marker file per sha256 of the document's bytes, under a directory named by the Gecko version, the
validator's version, the loading mode and the loader's own code (`lenient.py`, `loader.py`), so a change of any of
them starts afresh. A marker is written once the document validated and compiled; it holds the number of tools and
the repaired faults (`Known`): a clean document then skips the repair pass too, and a start whose documents are all
known needs no compile in the start-up check (`gecko.cli`). Writing is atomic (create-then-rename), so several
processes can share the directory.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from gecko.toolkits import lenient


@dataclass(frozen=True)
class Known:
    """What a marker says about a document that loaded before."""

    tools: int
    faults: tuple[str, ...] = ()


@functools.cache
def cache_tag() -> str:
    """What a verdict depends on besides the document: Gecko, the validator and the repair rules."""
    try:
        gecko = version("gecko-gats")
    except PackageNotFoundError:
        gecko = "local"
    code = hashlib.sha256()
    for module in (lenient.__file__, Path(lenient.__file__).with_name("loader.py")):
        code.update(Path(module).read_bytes())
    return f"gecko-{gecko}-osv-{version('openapi-spec-validator')}-code-{code.hexdigest()[:12]}"


KEEP_VERSIONS = 4
"""Most directories of one cache (one per Gecko version and loading mode) kept: the most recently used."""


def use_version_dir(directory: Path, keep: int = KEEP_VERSIONS) -> None:
    """Mark one version's cache directory used now; when it is new, remove all but the `keep - 1` most recently used
    of the other versions' (each code change makes a new one, and a snapshot directory of 3,600 toolkits holds 20 MB).
    A server still using a removed one only loads its documents afresh."""
    try:
        if directory.is_dir():
            os.utime(directory)
            return
        others = sorted((p for p in directory.parent.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime,
                        reverse=True)
    except OSError:
        return
    for stale in others[keep - 1:]:
        shutil.rmtree(stale, ignore_errors=True)


class ValidationCache:
    """Marker files named by content hash; `None` directory disables caching."""

    def __init__(self, directory: Path | None, mode: str = "auto") -> None:
        self._dir = directory / "validated" / f"{cache_tag()}-{mode}" if directory else None
        if self._dir is not None:
            use_version_dir(self._dir)

    @staticmethod
    def key(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    def known(self, key: str) -> Known | None:
        """What `remember` stored for a document that loaded, or None when it is not known (or the marker is not
        one of ours)."""
        if self._dir is None:
            return None
        try:
            data = json.loads((self._dir / key).read_bytes())
            return Known(int(data["tools"]), tuple(str(f) for f in data["faults"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def remember(self, key: str, tools: int, faults: list[str]) -> None:
        if self._dir is None:
            return
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            tmp = self._dir / f".{key}.{os.getpid()}"
            tmp.write_text(json.dumps({"tools": tools, "faults": faults}), encoding="utf-8")
            os.replace(tmp, self._dir / key)
        except OSError:
            pass  # a read-only cache dir only costs re-validation next start
