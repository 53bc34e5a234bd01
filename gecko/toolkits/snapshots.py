"""Loaded toolkits kept between starts, so a warm start reads them instead of building them again.

A cold start parses each document, guards it, repairs it, validates it, prepares and compiles its schemas and infers
its world model (seconds for thousands of documents, in every process that loads them). Once a document has loaded,
its `Toolkit` is written here as a pickle; the next start whose document, path, Gecko code and loading mode are the
same reads it back instead.

- **Key.** One file per document, named by the sha256 of its path and its bytes (the toolkit's name and source
  come from the path), under a directory named by the validation cache's tag (Gecko's version) and `snapshot_tag()`
  (the Python and library versions and a hash of the code that builds a toolkit) and the loading mode (`--strict`, `--strict-validation`,
  `--max-toolkit-nodes`). A change of any of them misses, and the document loads afresh.
- **Validators.** The compiled validators are not pickled: a snapshot holds each validator's schema and rebuilds the
  same validator when read (`SafeValidator` with Gecko's format checker; a `FastCheck` pickles as its schema and
  that validator).
- **Trust.** Unpickling runs code, so snapshots are read only from a directory this user owns that nobody else may
  write to; otherwise they are neither read nor written (one warning).
- **Size.** Each code change makes a new directory: the most recently used ones are kept (`KEEP_VERSIONS`).
- **Damage.** A snapshot that cannot be read (truncated, another format, not a toolkit) is ignored with a warning and
  the document loads afresh; writing is atomic (create, then rename), so concurrent starts can share the directory.
"""

from __future__ import annotations

import copyreg
import functools
import hashlib
import io
import logging
import os
import pickle
import stat
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from jsonschema.protocols import Validator

from gecko.toolkits import validation_cache
from gecko.toolkits.model import Toolkit
from utils.schema.formats import FORMAT_CHECKER
from utils.schema.patterns import SafeValidator

log = logging.getLogger(__name__)
FORMAT = "gecko-toolkit-snapshot-1"
_LIBRARIES = ("jsonschema", "jsonschema-rs", "referencing", "openapi-spec-validator", "pyyaml", "orjson", "pydantic")
_CODE = (Path(__file__).parent, Path(__file__).parents[1] / "upstream", Path(__file__).parents[2] / "utils" / "schema")
"""Where the code that builds a toolkit lives (every module of these packages counts, but `_NOT_BUILDING`)."""
_NOT_BUILDING = ("search*.py", "lazy.py", "prebuilt.py", "explain.py")
"""Modules there that never shape a loaded toolkit (tool search, the pool's lazy registry, `gecko toolkits explain`)."""


@functools.cache
def snapshot_tag() -> str:
    """What a snapshot depends on besides its document: Gecko, Python, the libraries and the loading code."""
    parts = [f"py{sys.version_info.major}.{sys.version_info.minor}"]
    for name in ("gecko-gats", *_LIBRARIES):
        try:
            parts.append(f"{name}={version(name)}")
        except PackageNotFoundError:
            parts.append(f"{name}=none")
    code = hashlib.sha256("\n".join(parts).encode())
    for directory in _CODE:
        for module in sorted(directory.glob("*.py")):
            if any(module.match(pattern) for pattern in _NOT_BUILDING):
                continue
            code.update(module.name.encode())
            code.update(module.read_bytes())
    return code.hexdigest()[:16]


class _RootResolver:
    """The `$ref` resolver a validator makes for its root schema, made when the validator first needs it.

    Making it is most of the cost of a validator (thousands per start), and most validators never use it: jsonschema-rs
    answers calls first, and the Python validator runs only where it cannot (`utils.schema.fastcheck`)."""

    __slots__ = ("_real", "_schema")

    def __init__(self, schema: Any) -> None:
        self._schema = schema
        self._real: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._real is None:
            self._real = SafeValidator(self._schema, format_checker=FORMAT_CHECKER)._resolver
        return getattr(self._real, name)


def _validator(schema: Any) -> Validator:
    """The validator the loader compiles for `schema` (rebuilt when a snapshot is read), its resolver made on use."""
    try:
        return SafeValidator(schema, format_checker=FORMAT_CHECKER, _resolver=_RootResolver(schema))
    except TypeError:  # a jsonschema without its (private) `_resolver` argument: make it now
        return SafeValidator(schema, format_checker=FORMAT_CHECKER)


def _reduce_validator(validator: Any) -> tuple[Any, tuple[Any, ...]]:
    if validator.format_checker is not FORMAT_CHECKER:
        raise pickle.PicklingError("a validator with another format checker cannot be kept in a snapshot")
    return _validator, (validator.schema,)


class _Pickler(pickle.Pickler):
    """Pickles a toolkit with its validators as their schemas (what they are compiled from)."""

    dispatch_table = {**copyreg.dispatch_table, SafeValidator: _reduce_validator}


def snapshot_bytes(toolkit: Toolkit, faults: list[str], key: str) -> bytes:
    """The snapshot of one loaded toolkit and the faults repaired on the way to it."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((FORMAT, key, toolkit, faults))
    return buffer.getvalue()


def _private(directory: Path) -> bool:
    """True when `directory` is ours and nobody else may write to it (creating it, private, if missing)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = directory.stat()
    owner_ok = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return owner_ok and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class ToolkitSnapshots:
    """Snapshot files of loaded toolkits under `directory` (None: keep none)."""

    def __init__(self, directory: Path | None, mode: str) -> None:
        self._dir: Path | None = None
        if directory is None:
            return
        root = directory / "snapshots"
        try:
            usable = _private(root)
        except OSError as exc:
            log.warning("toolkit snapshots off: %s cannot be used (%s); every start loads the documents afresh",
                        root, exc)
            return
        if not usable:
            log.warning("toolkit snapshots off: %s is not this user's alone (another user could write to it); "
                        "every start loads the documents afresh", root)
            return
        self._dir = root / f"{validation_cache.cache_tag()}-{snapshot_tag()}-{mode}"
        validation_cache.use_version_dir(self._dir)

    @staticmethod
    def key(path: Path, data: bytes) -> str:
        """The snapshot's name: a hash of the document's path (as given: the toolkit's name and source are made of
        it) and its bytes."""
        digest = hashlib.sha256(str(path).encode())
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def read(self, key: str) -> tuple[Toolkit, list[str]] | None:
        """The toolkit and faults kept under `key`, or None (no snapshot, or one that cannot be read: warned)."""
        if self._dir is None:
            return None
        path = self._dir / key
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            kind, stored_key, toolkit, faults = pickle.loads(data)  # noqa: S301 - our own file in a private directory
            if kind != FORMAT or stored_key != key or not isinstance(toolkit, Toolkit) or not isinstance(faults, list):
                raise ValueError("not a toolkit snapshot of this document")
        except Exception as exc:  # noqa: BLE001 - a damaged file raises anything pickle can; it is only a cache
            log.warning("toolkit snapshot %s cannot be read (%s: %s); loading the document afresh",
                        path, type(exc).__name__, exc)
            return None
        return toolkit, [str(f) for f in faults]

    def write(self, key: str, toolkit: Toolkit, faults: list[str]) -> None:
        """Keep `toolkit` under `key` (a failure to write only costs a slower next start)."""
        if self._dir is None:
            return
        try:
            data = snapshot_bytes(toolkit, faults, key)
            self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self._dir / f".{key}.{os.getpid()}"
            tmp.write_bytes(data)
            os.replace(tmp, self._dir / key)
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
            log.debug("toolkit %s not kept as a snapshot: %s", toolkit.name, exc)
