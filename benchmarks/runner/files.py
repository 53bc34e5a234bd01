"""Durable files: whole-file replacement through a temporary file, and append-only JSON Lines that survive a
crash (the checkpoint, BFCL result files).

JSON Lines durability: every line is written with one `write` of the complete line on an `O_APPEND`
descriptor, then `fsync`. A crash can leave at most a torn last line. Readers ignore an unterminated last line
that does not parse; an appender reopening a file first truncates such a tail, so new lines never glue onto a
fragment.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TypeVar

T = TypeVar("T")


class CorruptLinesError(ValueError):
    """A line other than the last one of a JSON Lines file does not parse (not a torn write)."""


def fsync_dir(directory: Path) -> None:
    """Make a directory entry (a new or renamed file) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_atomic(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Replace `path` with `data` through a temporary file, `fsync` and a rename: readers never see half a
    file, and a crash leaves the old one. The file gets `mode`, by default what the umask leaves of 0666 (as
    for every other file a run writes)."""
    if mode is None:
        mode = 0o666 & ~current_umask()
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            _write_all(fd, payload)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def current_umask() -> int:
    """The process's file-creation mask."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def read_json_lines(path: Path, parse: Callable[[str], T], errors: tuple[type[Exception], ...]) -> list[T]:
    """Every line of a JSON Lines file parsed, in file order; an unterminated last line that does not parse is
    ignored (a torn write). Returns an empty list when the file does not exist.

    Args:
        path: The file.
        parse: Turns one line into a value.
        errors: What `parse` raises for a line that is not a value.

    Raises:
        CorruptLinesError: A complete line does not parse.
    """
    if not path.exists():
        return []
    lines = path.read_bytes().decode("utf-8").split("\n")
    tail = lines.pop()
    values: list[T] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            values.append(parse(line))
        except errors as exc:
            raise CorruptLinesError(f"{path}:{number}: not a valid line: {exc}") from None
    if tail.strip():
        try:
            values.append(parse(tail))
        except errors:
            pass
    return values


def _repair_tail(path: Path, parse: Callable[[str], object], errors: tuple[type[Exception], ...]) -> None:
    """Make the file end at a line boundary: terminate a complete last line, drop a torn one."""
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    try:
        parse(data[cut:].decode("utf-8"))
    except errors + (UnicodeDecodeError,):
        with path.open("r+b") as handle:
            handle.truncate(cut)
            handle.flush()
            os.fsync(handle.fileno())
        return
    with path.open("ab") as handle:
        handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())


class JsonLinesAppender:
    """Appends whole lines to one JSON Lines file, each made durable; safe to share between threads.

    Args:
        path: The file (parent directories are created; an existing file is continued after its tail is
            repaired).
        parse: Parses one line (used to tell a complete last line from a torn one).
        errors: What `parse` raises for a line that is not a value.
    """

    def __init__(self, path: Path, parse: Callable[[str], object], errors: tuple[type[Exception], ...]) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        if existed:
            _repair_tail(path, parse, errors)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if not existed:
            fsync_dir(path.parent)
        # Keeps two threads from interleaving the write+fsync of their lines.
        self._lock = threading.Lock()

    def append(self, line: str) -> None:
        """Write one line (a newline is added) and fsync it."""
        data = (line + "\n").encode("utf-8")
        with self._lock:
            _write_all(self._fd, data)
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the file descriptor (idempotent)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> JsonLinesAppender:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
