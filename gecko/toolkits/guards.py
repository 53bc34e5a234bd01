"""What a toolkit document may not do to the loader: expand without bound, point outside itself, take a route's name.

Checked right after parsing, before any validation reads the document:

- **Size after alias expansion.** YAML aliases share one parsed object, so a 2 KB file can stand for 10^9 nodes,
  which validation and compilation then walk one by one (a 1.2 KB file took over 60 s). The document is counted
  with every alias expanded, stopping at the bound (`--max-toolkit-nodes`), so the count itself is bounded too,
  and a self-referencing alias is over any bound. Below the bound, aliases may multiply a large document at most
  `ALIAS_FACTOR` times.
- **References outside the document.** A `$ref` (or `$dynamicRef`) that is not a fragment of the document itself
  (`#/components/...`) and an absolute `$id` (which moves where fragments resolve) would make the validator fetch a
  URL or open a file (`file:///etc/passwd`, a named pipe). They are refused with their location, never read.
- **Route names.** A toolkit named like one of Gecko's own routes (`health`, `ui`, `sessions`, `mcp`, …) could
  never be reached at `/{toolkit}/…`.

And when each operation is compiled, a response schema that asks for more than `RESPONSE_MINIMUMS` (a
`minLength: 50000000`, a `minItems: 5000000`) is lowered to it, with a warning (`bounded_response`).
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)
DEFAULT_MAX_NODES = 1_000_000
ALIAS_FACTOR = 100
"""Most times YAML aliases may multiply a document of over `ALIAS_FLOOR` values: a document 100 times larger expanded
than written is an alias bomb, refused before it is walked (400,000 values just under the node bound took 5 s)."""
ALIAS_FLOOR = 100_000
RESERVED_NAMES = frozenset({
    "health", "ui", "sessions", "mcp", "docs", "redoc", "openapi", "openapi.json", "metrics", "toolkits", "tools",
    "session-id", "init-session-state", "get-session-state", "set-session-state", "update-state-from-real", "run",
})
"""First path segments of Gecko's own routes (a test holds this to the app's routes)."""
_REF_KEYS = ("$ref", "$dynamicRef")
_MAX_REPORTED = 3


class DocumentRefused(ValueError):
    """A toolkit document the loader will not process; the message is one line naming the reason and where."""


def expanded_nodes(doc: Any, limit: int) -> int:
    """The number of JSON values in `doc` with every shared (aliased) object counted each time it appears, up to
    `limit + 1` (the count stops there)."""
    count = 0
    stack = [doc]
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            return count
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def distinct_nodes(doc: Any) -> int:
    """The number of JSON values in `doc` with each shared (aliased) object counted once."""
    count = 0
    seen: set[int] = set()
    stack = [doc]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, (dict, list)):
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
    return count


def outside_references(doc: Any) -> list[str]:
    """`location: value` of every reference that leaves the document (each shared object is visited once)."""
    found: list[str] = []
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, where = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in seen:
            continue
        seen.add(id(node))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            here = f"{where}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if isinstance(node, dict) and isinstance(value, str) and (
                    (key in _REF_KEYS and not value.startswith("#")) or (key == "$id" and ":" in value)):
                found.append(f"{here}: {value[:200]!r}")
            else:
                stack.append((value, here))
    return sorted(found)


def check_document(name: str, doc: Any, max_nodes: int = DEFAULT_MAX_NODES) -> None:
    """Raise DocumentRefused when the toolkit `name` with the parsed `doc` must not be loaded (see the module doc)."""
    if name.lower() in RESERVED_NAMES:
        raise DocumentRefused(f"the toolkit name {name!r} is one of Gecko's own routes "
                              f"(/{name.lower()}); rename the file")
    expanded = expanded_nodes(doc, max_nodes)
    if expanded > max_nodes:
        raise DocumentRefused(f"the document expands to more than {max_nodes:,} JSON values (YAML aliases are counted "
                              "each time they are used; --max-toolkit-nodes)")
    if expanded > ALIAS_FLOOR and expanded > ALIAS_FACTOR * (written := distinct_nodes(doc)):
        raise DocumentRefused(f"YAML aliases multiply the document {expanded // written:,} times ({written:,} JSON "
                              f"values written, {expanded:,} expanded; at most {ALIAS_FACTOR} times): an alias bomb")
    outside = outside_references(doc)
    if outside:
        more = f" (and {len(outside) - _MAX_REPORTED} more)" if len(outside) > _MAX_REPORTED else ""
        raise DocumentRefused("references outside the document are not followed (bundle them into the file): "
                              + "; ".join(outside[:_MAX_REPORTED]) + more)


RESPONSE_MINIMUMS = {"minLength": 100_000, "minItems": 10_000, "minProperties": 10_000}
"""The largest `minLength`, `minItems` and `minProperties` a response schema keeps: a larger one is lowered to this
at load (the request limits `--max-string-chars` and `--max-array-items` have the same defaults), and a generated
response is capped as a whole as well (`utils.schema.instance.MAX_GENERATED_SIZE`)."""
_CLAMP_DEPTH = 64


def bounded_response(schema: Any, where: str) -> Any:
    """`schema` with every minimum of `RESPONSE_MINIMUMS` lowered to its bound (a copy where one changes; shared
    sub-schemas are never edited in place), each change logged once as a warning naming `where`."""
    notes: list[str] = []
    bounded = _clamp(schema, "", notes, 0)
    for note in notes:
        log.warning("%s response: %s", where, note)
    return bounded


def _clamp(node: Any, at: str, notes: list[str], depth: int) -> Any:
    if depth > _CLAMP_DEPTH or not isinstance(node, (dict, list)):
        return node
    if isinstance(node, list):
        items = [_clamp(value, f"{at}/{index}", notes, depth + 1) for index, value in enumerate(node)]
        return items if any(a is not b for a, b in zip(items, node)) else node
    changed: dict[str, Any] = {}
    for key, value in node.items():
        bound = RESPONSE_MINIMUMS.get(key)
        if bound is not None and isinstance(value, int) and not isinstance(value, bool) and value > bound:
            changed[key] = bound
            notes.append(f"{key} {value:,} at {at or '/'} lowered to {bound:,} (a simulated response this large "
                         "would hold a worker and fill the session store)")
        elif isinstance(value, (dict, list)):
            inner = _clamp(value, f"{at}/{key}", notes, depth + 1)
            if inner is not value:
                changed[key] = inner
    return {**node, **changed} if changed else node
