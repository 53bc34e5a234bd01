"""Read the metadata of a GGUF file (architecture, name, chat template) without loading the model.

GGUF: magic `GGUF`, version (uint32), tensor count and metadata count (uint64), then key/value pairs
(key: uint64 length + UTF-8; type: uint32; value). Only the header is read; arrays (the vocabulary) are
skipped over, not kept.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
WANTED = ("general.architecture", "general.name", "tokenizer.chat_template")


class GGUFError(ValueError):
    """Not a GGUF file, or a truncated one."""


@dataclass(frozen=True)
class GGUFInfo:
    """What Gecko needs to know of a model file."""

    path: Path
    architecture: str
    """`general.architecture`: `gemma3`, `llama`, `qwen2`, …"""
    name: str
    chat_template: str | None
    """The bundled Jinja chat template, if any."""

    @property
    def template_supports_tools(self) -> bool:
        """Whether the bundled template renders the request's `tools` (else llama.cpp drops them)."""
        return bool(self.chat_template) and "tools" in (self.chat_template or "")


def _read(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise GGUFError("the file ends inside its header")
    return data


def _string(stream: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", _read(stream, 8))
    return _read(stream, length).decode("utf-8", "replace")


def _value(stream: BinaryIO, kind: int, keep: bool) -> Any:
    if kind in _SCALARS:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, _read(stream, struct.calcsize(fmt)))[0]
    if kind == _STRING:
        if keep:
            return _string(stream)
        (length,) = struct.unpack("<Q", _read(stream, 8))
        stream.seek(length, 1)
        return None
    if kind == _ARRAY:
        item, count = struct.unpack("<IQ", _read(stream, 12))
        if item in _SCALARS:
            stream.seek(struct.calcsize(_SCALARS[item]) * count, 1)
        else:
            for _ in range(count):
                _value(stream, item, False)
        return None
    raise GGUFError(f"unknown metadata type {kind}")


def read_gguf(path: Path | str) -> GGUFInfo:
    """The metadata of the model at `path`.

    Raises:
        GGUFError: not a GGUF file.
        OSError: it cannot be read.
    """
    path = Path(path)
    found: dict[str, Any] = {}
    with path.open("rb") as stream:
        if _read(stream, 4) != b"GGUF":
            raise GGUFError(f"{path} is not a GGUF model file")
        _version, _tensors, count = struct.unpack("<IQQ", _read(stream, 20))
        for _ in range(count):
            key = _string(stream)
            (kind,) = struct.unpack("<I", _read(stream, 4))
            value = _value(stream, kind, key in WANTED)
            if key in WANTED:
                found[key] = value
            if len(found) == len(WANTED):
                break
    return GGUFInfo(path, str(found.get("general.architecture") or ""), str(found.get("general.name") or path.stem),
                    found.get("tokenizer.chat_template"))
