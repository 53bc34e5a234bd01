"""Strict lookup of tools: by `toolkit/operationId`, or by a document's own method and path."""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gecko.toolkits.lazy import LazyToolkit, Toolkits
from gecko.toolkits.model import Operation, Toolkit, path_pattern

if TYPE_CHECKING:
    from gecko.toolkits.search_store import StoredIndex

log = logging.getLogger(__name__)


class ToolNotFound(LookupError):
    """No such tool; carries the closest names for the 404 message."""

    def __init__(self, message: str, suggestions: list[str]) -> None:
        super().__init__(message)
        self.suggestions = suggestions


class MethodNotAllowed(LookupError):
    """The path exists with other methods."""

    def __init__(self, message: str, allowed: list[str]) -> None:
        super().__init__(message)
        self.allowed = allowed


@dataclass
class PathMatch:
    operation: Operation
    path_params: dict[str, str]


@dataclass
class ToolkitRegistry:
    """Toolkits in priority order; the first toolkit of a name wins, later ones are shadowed."""

    toolkits: Toolkits = field(default_factory=Toolkits)
    """Name → toolkit; one registered with `add_lazy` is loaded when first read (`gecko.toolkits.lazy`)."""
    _aliases: dict[str, str] = field(default_factory=dict)
    _call_names: dict[str, dict[str, str]] = field(default_factory=dict)
    """toolkit → {alias: operationId} of the operations called by an alias (`gecko.toolkits.names`)."""
    stored: StoredIndex | None = None
    """The prebuilt search index that every toolkit of this registry comes from, in its order (None: the search
    index is built in memory from the loaded toolkits)."""
    _routes: dict[str, list[str]] = field(default_factory=dict)
    """toolkit not loaded yet → its tools' document paths, so a call by path loads only a toolkit that has the path."""
    _route_patterns: dict[str, list[re.Pattern[str]]] = field(default_factory=dict)
    """The same as regexes, compiled on the first call by path."""

    def add(self, toolkit: Toolkit) -> None:
        if toolkit.name in self.toolkits:
            log.warning("toolkit %s from %s is shadowed by %s", toolkit.name, toolkit.source,
                        self.toolkits[toolkit.name].source)
            return
        self.toolkits[toolkit.name] = toolkit
        self._add_aliases(toolkit.name, toolkit.aliases)

    def add_lazy(self, stub: LazyToolkit, routes: list[tuple[str, str]] | None = None) -> None:
        """Register a toolkit to load on first use (`routes`: its tools' method and path, when known)."""
        if stub.name in self.toolkits:
            log.warning("toolkit %s is shadowed by an earlier one of that name", stub.name)
            return
        self.toolkits.add_lazy(stub)
        if routes is not None:
            self._routes[stub.name] = sorted({path for _, path in routes})
        self._add_aliases(stub.name, stub.aliases)

    def _add_aliases(self, name: str, aliases: tuple[str, ...]) -> None:
        for alias in aliases:
            if alias not in self.toolkits:
                self._aliases.setdefault(alias, name)

    def _aliased(self, toolkit: Toolkit) -> dict[str, str]:
        found = self._call_names.get(toolkit.name)
        if found is None:
            found = {op.alias: op.operation_id for op in toolkit.operations.values() if op.alias}
            self._call_names[toolkit.name] = found
        return found

    @property
    def tool_count(self) -> int:
        return self.toolkits.tool_count()

    def toolkit(self, name: str) -> Toolkit | None:
        """Toolkit by file stem or title slug."""
        found = self.toolkits.get(name)
        if found is None and name in self._aliases:
            found = self.toolkits.get(self._aliases[name])
        return found

    def get(self, toolkit_name: str, operation_id: str) -> Operation:
        """The operation, or ToolNotFound with the nearest names."""
        toolkit = self.toolkit(toolkit_name)
        if toolkit is None:
            near = difflib.get_close_matches(toolkit_name, list(self.toolkits), n=5, cutoff=0.5)
            raise ToolNotFound(f"unknown toolkit {toolkit_name!r}", near)
        op = toolkit.operations.get(operation_id)
        if op is None:
            op = toolkit.operations.get(self._aliased(toolkit).get(operation_id, ""))
        if op is None:
            raise ToolNotFound(f"toolkit {toolkit.name!r} has no tool {operation_id!r}", self.near(toolkit, operation_id))
        return op

    def near(self, toolkit: Toolkit, name: str) -> list[str]:
        """The callable names of `toolkit` closest to `name` (an operationId, or a name with `/` in it)."""
        names = [op.call_name for op in toolkit.operations.values()]
        by_id = {op.operation_id: op.call_name for op in toolkit.operations.values() if op.alias}
        if name in by_id:
            return [by_id[name]]
        return difflib.get_close_matches(name, names, n=5, cutoff=0.5) or [
            by_id[i] for i in difflib.get_close_matches(name, list(by_id), n=5, cutoff=0.5)]

    def match_path(self, method: str, path: str) -> PathMatch | None:
        """Match `/{toolkit}{doc path}` first, then a bare document path in priority order.

        Raises MethodNotAllowed when a path matches only with other methods; returns None when nothing matches.
        """
        allowed: list[str] = []
        head, _, rest = path.lstrip("/").partition("/")
        prefixed = self.toolkit(head)
        candidates = [(prefixed, "/" + rest)] if prefixed is not None else []
        candidates += [(t, path) for t in self._may_route(path)]
        for toolkit, sub_path in candidates:
            for op in toolkit.operations.values():
                match = op.path_regex.match(sub_path)
                if match is None:
                    continue
                if op.method != method.lower():
                    allowed.append(op.method.upper())
                    continue
                names = re.findall(r"\{([^}/]+)\}", op.path)
                values = list(match.groupdict().values())
                return PathMatch(op, dict(zip(names, values)))
            if allowed:
                break
        if allowed:
            raise MethodNotAllowed(f"{method.upper()} is not allowed on {path}", sorted(set(allowed)))
        return None

    def _may_route(self, path: str) -> Iterator[Toolkit]:
        """The toolkits, in priority order, leaving out those not loaded yet that have no tool at `path`."""
        for name in self._routing_names(path):
            found = self.toolkits.get(name)
            if found is not None:
                yield found

    def _routing_names(self, path: str) -> Iterator[str]:
        """Names of the toolkits that may serve the bare document path `path`, in priority order (loaded or not)."""
        for name in self.toolkits:
            if self.toolkits.pending(name) is not None and name in self._routes:
                patterns = self._route_patterns.get(name)
                if patterns is None:
                    patterns = self._route_patterns[name] = [path_pattern(route) for route in self._routes[name]]
                if not any(pattern.match(path) for pattern in patterns):
                    continue
            yield name

    def lookup_loads(self, name: str) -> bool:
        """Whether `toolkit(name)` would load the toolkit first (registered from a prebuilt index and not used yet):
        the caller can then look it up in a thread, off the event loop."""
        return self.toolkits.pending(self._aliases.get(name, name)) is not None

    def match_loads(self, path: str) -> bool:
        """Whether `match_path` on `path` would load a toolkit first (one registered from a prebuilt index and not
        used yet): the caller can then match in a thread, so that compiling a large document does not hold up the
        event loop."""
        head = path.lstrip("/").partition("/")[0]
        return self.lookup_loads(head) or any(self.toolkits.pending(name) is not None
                                              for name in self._routing_names(path))
