"""Local JSON-pointer `$ref`s: one resolver for the toolkit loader and the instance generator."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote


class SchemaRefError(ValueError):
    """A `$ref` that cannot be resolved inside the document."""


def pointer_get(doc: Any, pointer: str) -> Any:
    """Resolve a local JSON pointer (`#/a/b`, or `#` for the whole document) in `doc`.

    Raises:
        SchemaRefError: an external reference, or a pointer that does not resolve.
    """
    if not pointer.startswith("#"):
        raise SchemaRefError(f"external $ref {pointer!r} is not supported; bundle the document into one file")
    node = doc
    for raw in pointer[1:].split("/")[1:] if pointer != "#" else []:
        token = unquote(raw).replace("~1", "/").replace("~0", "~")  # a URI fragment: percent-encoded (RFC 6901 §6)
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise SchemaRefError(f"$ref {pointer!r} does not resolve")
    return node
