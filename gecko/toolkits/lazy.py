"""Toolkits loaded on first use: the registry's mapping of toolkits, where an entry may still be a document to load.

A schemas directory with a prebuilt index (`gecko.toolkits.search_store`) is registered from its catalogue alone:
names, aliases and tool counts are known at once; a document is parsed, validated and compiled the first time its
toolkit is looked up, with the same checks and the same messages as a load at start-up. A document that fails
then is reported to that lookup (`ToolkitUnavailable`) and to every later one; with `--skip-invalid` it is left
out instead (logged), as it would have been at start-up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

from gecko.toolkits.model import Toolkit

log = logging.getLogger("gecko.toolkits")


class ToolkitUnavailable(LookupError):
    """A toolkit registered from a prebuilt index whose document failed to load on first use; the message says
    which file and why, as the start-up check would have."""


@dataclass(frozen=True)
class LazyToolkit:
    """A toolkit known from a catalogue, loaded by `load` on first use."""

    name: str
    aliases: tuple[str, ...]
    tool_count: int
    load: Callable[[], Toolkit]
    """Load the document (raises `ToolkitLoadError` with the start-up check's message)."""
    skip_invalid: bool = False
    """A document that fails is left out (logged) rather than reported to each lookup."""


class Toolkits(MutableMapping[str, Toolkit]):
    """Name → toolkit, in priority order; a lazily registered toolkit is loaded when it is first read (thread-safe:
    one load per toolkit). Iterating names, `len` and `in` load nothing; `values()` and `items()` load them all."""

    def __init__(self) -> None:
        self._entries: dict[str, Toolkit | LazyToolkit] = {}
        self._failed: dict[str, str] = {}
        self._lock = threading.Lock()

    def add_lazy(self, stub: LazyToolkit) -> None:
        """Register a toolkit to load on first use."""
        self._entries[stub.name] = stub

    def pending(self, name: str) -> LazyToolkit | None:
        """The stub of a toolkit not loaded yet (None: loaded, or unknown)."""
        entry = self._entries.get(name)
        return entry if isinstance(entry, LazyToolkit) else None

    def __getitem__(self, name: str) -> Toolkit:
        entry = self._entries[name]
        if isinstance(entry, Toolkit):
            return entry
        with self._lock:
            entry = self._entries[name]  # another thread may have loaded it meanwhile
            if isinstance(entry, Toolkit):
                return entry
            if name in self._failed:
                raise ToolkitUnavailable(self._failed[name])
            try:
                toolkit = entry.load()
            except Exception as exc:  # noqa: BLE001 - whatever the loader raised is this toolkit's problem, reported
                if entry.skip_invalid:
                    log.warning("skipped toolkit: %s", exc)
                    del self._entries[name]
                    raise KeyError(name) from None
                self._failed[name] = f"toolkit {name!r} cannot be loaded: {exc}"
                log.error("%s", self._failed[name])
                raise ToolkitUnavailable(self._failed[name]) from None
            self._entries[name] = toolkit
            return toolkit

    def __setitem__(self, name: str, toolkit: Toolkit) -> None:
        self._entries[name] = toolkit

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def loaded(self) -> int:
        """How many toolkits are loaded (all but those registered lazily and not used yet)."""
        return sum(1 for entry in self._entries.values() if isinstance(entry, Toolkit))

    def tool_count(self) -> int:
        """Tools of every toolkit (from the catalogue for those not loaded yet)."""
        return sum(e.tool_count if isinstance(e, LazyToolkit) else len(e.operations) for e in self._entries.values())

    def values(self) -> Any:  # a view that leaves out what --skip-invalid dropped on the way
        return [toolkit for _, toolkit in self._loaded_items()]

    def items(self) -> Any:
        return list(self._loaded_items())

    def _loaded_items(self) -> Iterator[tuple[str, Toolkit]]:
        for name in list(self._entries):
            try:
                yield name, self[name]
            except KeyError:
                continue
