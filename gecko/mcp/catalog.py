"""Gecko operations as MCP tools: names, input and output schemas, annotations.

One catalog per endpoint: `/mcp` lists every toolkit's tools as `{toolkit}__{name}`, `/mcp/{toolkit}` lists
one toolkit's tools under their own names (the original name when MCP allows it, so a simulated twin of a
real MCP server offers exactly the names of the real one). Catalogs are built once per worker and endpoint, their
listing on the first `tools/list`. On a registry served from a prebuilt index (the open-world pool), `/mcp` takes
its names from the index's catalogue (`CatalogueMcpCatalog`): a call or a search loads only the toolkits it uses;
listing every tool loads every toolkit.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mcp import types

from gecko.toolkits.model import Operation, Toolkit
from gecko.toolkits.registry import ToolkitRegistry, ToolNotFound
from gecko.toolkits.search_store import ToolEntry

MCP_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
"""Tool names the MCP specification accepts (2025-11-25)."""
MAX_NAME = 128
SEPARATOR = "__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def mcp_name(text: str) -> str:
    """`text` made a valid MCP tool name (runs of other characters become `_`; long names end with a hash)."""
    if MCP_NAME_RE.match(text):
        return text
    name = _UNSAFE.sub("_", text).strip("_") or "tool"
    if len(name) > MAX_NAME:
        name = name[: MAX_NAME - 9] + "_" + hashlib.sha256(text.encode()).hexdigest()[:8]
    return name


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")
_SCHEMA_ONES = ("items", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedItems",
                "additionalItems")
"""Keywords whose values are subschemas. `additionalProperties`/`unevaluatedProperties` are left alone:
`false` there is idiomatic and some providers require it literally."""


def portable(schema: Any) -> Any:
    """`schema` with boolean subschemas spelled as objects (`true` → `{}`, `false` → `{"not": {}}`).

    Equivalent JSON Schema that clients mapping tool schemas onto object-only dialects accept (the MCP
    Inspector's `--strict` check flags bare booleans as errors).
    """
    if schema is True:
        return {}
    if schema is False:
        return {"not": {}}
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: portable(sub) for name, sub in out[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [portable(sub) for sub in out[key]]
    for key in _SCHEMA_ONES:
        if key in out:
            value = out[key]
            out[key] = [portable(sub) for sub in value] if isinstance(value, list) else portable(value)
    for key in ("additionalProperties", "unevaluatedProperties"):
        if isinstance(out.get(key), dict):
            out[key] = portable(out[key])
    return out


def _describes_objects(schema: Any, defs: dict[str, Any], depth: int = 0) -> bool:
    """True when every value valid against `schema` is a JSON object (following `$ref`, oneOf, anyOf, allOf)."""
    if not isinstance(schema, dict) or depth > 16:
        return False
    if schema.get("type") == "object":
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _describes_objects(defs.get(ref.removeprefix("#/$defs/")), defs, depth + 1)
    if isinstance(schema.get("allOf"), list) and any(
            _describes_objects(s, defs, depth + 1) for s in schema["allOf"]):
        return True
    branches = [b for key in ("oneOf", "anyOf") for b in (schema.get(key) or [])]
    return bool(branches) and all(_describes_objects(b, defs, depth + 1) for b in branches)


def output_schema(operation: Operation) -> dict[str, Any] | None:
    """The response schema as an MCP `outputSchema` (root `type: object`), or None when responses are not objects."""
    schema = operation.response_schema
    source = operation.extensions.get("x-gecko-source-output-schema")
    if isinstance(source, dict) and "$ref" not in json.dumps(source):
        schema = source  # what the real server declares, not what `gecko twin learn` pinned for the twin
    if operation.extensions.get("x-gecko-response-origin") in ("generic", "learned"):
        return None  # the source declared no result (a learned one is Gecko's, not the server's): promise nothing
    if not isinstance(schema, dict) or not _describes_objects(schema, schema.get("$defs") or {}):
        return None
    schema = portable(schema)
    return schema if schema.get("type") == "object" else {"type": "object", **schema}


def tool_annotations(operation: Operation) -> types.ToolAnnotations:
    """`readOnlyHint` from the read/write kind; a write may change or delete data (`destructiveHint`).

    A twin of a real MCP server keeps that server's own annotations (`x-mcp-annotations`), so it lists as
    the real one does; only `readOnlyHint` is made to agree with the kind Gecko acts on.
    """
    read = operation.access == "read"
    source = operation.extensions.get("x-mcp-annotations")
    if isinstance(source, dict):
        return types.ToolAnnotations.model_validate({**source, "readOnlyHint": read})
    return types.ToolAnnotations(readOnlyHint=read, destructiveHint=not read, idempotentHint=True if read else None)


def _description(operation: Operation) -> str:
    text = operation.description or operation.summary
    return text or f"{operation.method.upper()} {operation.path} ({operation.access})"


@dataclass(frozen=True)
class McpTool:
    """One operation under its MCP name."""

    name: str
    operation: Operation

    def listing(self) -> types.Tool:
        """The `tools/list` entry."""
        op = self.operation
        return types.Tool(
            name=self.name,
            title=op.original_name if op.original_name != self.name else None,
            description=_description(op),
            inputSchema=portable(op.args_schema),
            outputSchema=output_schema(op),
            annotations=tool_annotations(op),
            _meta={"gecko/tool": op.tool_name, "gecko/access": op.access},
        )


class McpCatalog:
    """The tools of one MCP endpoint, by MCP name."""

    def __init__(self, tools: Iterable[McpTool]) -> None:
        self._tools = {t.name: t for t in tools}
        self._listing: list[types.Tool] | None = None
        self._names = {t.operation.tool_name: t.name for t in self._tools.values()}

    @property
    def tools(self) -> dict[str, McpTool]:
        """Every tool of this endpoint, by MCP name."""
        return self._tools

    @property
    def listing(self) -> list[types.Tool]:
        """The `tools/list` entries (made on first use)."""
        if self._listing is None:
            self._listing = [t.listing() for t in self.tools.values()]
        return self._listing

    def name_of(self, operation: Operation) -> str | None:
        """The MCP name of `operation` at this endpoint (None if it is not listed here)."""
        return self._names.get(operation.tool_name)

    def get(self, name: str) -> Operation:
        """The operation behind an MCP tool name.

        Raises:
            ToolNotFound: no such tool at this endpoint (with the nearest names).
        """
        tool = self.tools.get(name)
        if tool is None:
            near = difflib.get_close_matches(name, list(self.tools), n=5, cutoff=0.5)
            raise ToolNotFound(f"unknown tool {name!r}", near)
        return tool.operation

    @classmethod
    def for_toolkit(cls, toolkit: Toolkit) -> McpCatalog:
        """One toolkit's tools under their original names where MCP accepts them, else their operationIds."""
        return cls(_unique((_own_name(op), op) for op in toolkit.operations.values()))

    @classmethod
    def for_registry(cls, registry: ToolkitRegistry) -> McpCatalog:
        """Every toolkit's tools as `{toolkit}__{name}` (from the prebuilt index's catalogue when the registry is
        served from one: no toolkit is loaded to name them)."""
        if registry.stored is not None:
            return CatalogueMcpCatalog(registry, registry.stored.tools)
        return cls(_unique((_registry_name(tk.name, op.original_name, op.call_name), op)
                           for tk in registry.toolkits.values() for op in tk.operations.values()))


class CatalogueMcpCatalog(McpCatalog):
    """`/mcp` of a registry served from a prebuilt index: the same names as `McpCatalog.for_registry` would give,
    made from the catalogue; `get` loads the tool's toolkit only, `tools` and `listing` load every toolkit."""

    def __init__(self, registry: ToolkitRegistry, entries: Iterable[ToolEntry]) -> None:
        listed = list(entries)
        names = _unique_names(_registry_name(e.toolkit, e.original_name, e.call_name) for e in listed)
        self._registry = registry
        self._entries = dict(zip(names, listed, strict=True))
        self._names = {f"{e.toolkit}/{e.operation_id}": name for name, e in self._entries.items()}
        self._listing = None
        self._loaded: dict[str, McpTool] | None = None

    @property
    def tools(self) -> dict[str, McpTool]:
        if self._loaded is None:
            self._loaded = {name: McpTool(name, self._registry.get(e.toolkit, e.operation_id))
                            for name, e in self._entries.items()}
        return self._loaded

    def get(self, name: str) -> Operation:
        entry = self._entries.get(name)
        if entry is None:
            near = difflib.get_close_matches(name, list(self._entries), n=5, cutoff=0.5)
            raise ToolNotFound(f"unknown tool {name!r}", near)
        return self._registry.get(entry.toolkit, entry.operation_id)


def _registry_name(toolkit: str, original_name: str, call_name: str) -> str:
    return mcp_name(f"{mcp_name(toolkit)}{SEPARATOR}{_own_name_of(original_name, call_name)}")


def _own_name(operation: Operation) -> str:
    return _own_name_of(operation.original_name, operation.call_name)


def _own_name_of(original_name: str, call_name: str) -> str:
    return original_name if MCP_NAME_RE.match(original_name) else mcp_name(call_name)


def _unique(pairs: Iterable[tuple[str, Operation]]) -> list[McpTool]:
    """Distinct names: a clash gets `_2`, `_3`, … in the order given (registry and document order: stable)."""
    listed = list(pairs)
    return [McpTool(name, op) for name, (_, op) in zip(_unique_names(n for n, _ in listed), listed, strict=True)]


def _unique_names(names: Iterable[str]) -> list[str]:
    """`names` made distinct: a clash gets `_2`, `_3`, … in the order given."""
    taken: set[str] = set()
    found = []
    for name in names:
        candidate, counter = name, 2
        while candidate in taken:
            suffix = f"_{counter}"
            candidate = name[: MAX_NAME - len(suffix)] + suffix
            counter += 1
        taken.add(candidate)
        found.append(candidate)
    return found


class McpCatalogs:
    """Catalogs of one worker, built on first use per endpoint."""

    def __init__(self, registry: ToolkitRegistry) -> None:
        self.registry = registry
        self._cache: dict[str | None, McpCatalog] = {}

    def built(self, toolkit: str | None) -> bool:
        """Whether the catalog of `toolkit` is built already (`get` then costs nothing)."""
        return toolkit in self._cache

    def get(self, toolkit: str | None) -> McpCatalog:
        """The catalog of `/mcp` (None) or `/mcp/{toolkit}`.

        Raises:
            ToolNotFound: unknown toolkit (with the nearest names).
        """
        found = self._cache.get(toolkit)
        if found is not None:
            return found
        if toolkit is None:
            catalog = McpCatalog.for_registry(self.registry)
        else:
            kit = self.registry.toolkit(toolkit)
            if kit is None:
                near = difflib.get_close_matches(toolkit, list(self.registry.toolkits), n=5, cutoff=0.5)
                raise ToolNotFound(f"unknown toolkit {toolkit!r}", near)
            catalog = McpCatalog.for_toolkit(kit)
        self._cache[toolkit] = catalog
        return catalog
