"""`gecko toolkits explain DOCUMENT|DIR…`: how the world model binds each operation of a toolkit, and why.

For every operation: its read/write access, the resource and action it is bound to (or none), how an update
changes the record (replace, merge, merge patch), the fields the server makes, what the list's query arguments
mean and which ones Gecko ignores, and the reason for the binding. Override a binding with `x-gecko-resource`
(see `gecko.toolkits.resources`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gecko.toolkits.loader import ToolkitLoadError, load_document, load_toolkits
from gecko.toolkits.model import Toolkit
from gecko.toolkits.resources import bindings_public


def explain_toolkit(toolkit: Toolkit) -> list[dict[str, Any]]:
    """One row per operation: name, method and path, access, and its world binding (None: not bound)."""
    return [{"operation": op.operation_id, "route": f"{op.method.upper()} {op.path}", "access": op.access,
             "status": op.success_status, "binding": bindings_public(op)} for op in toolkit.operations.values()]


def _line(row: dict[str, Any]) -> str:
    binding = row["binding"]
    head = f"  {row['operation']}  ({row['route']}, {row['access']}, answers {row['status']})"
    if binding is None:
        return head + "\n      not bound: answers are generated from the response schema, the state is not changed"
    if "resource" not in binding:
        return head + f"\n      sets the toolkit's fields {', '.join(binding['sets_fields'])}"
    parts = [f"{binding['action']} {binding['resource']} in '{binding['collection']}' (id field "
             f"'{binding['id_field']}'" + (f", id argument '{binding['id']}'" if binding.get("id") else "") + ")"]
    for key, label in (("mode", "update mode"), ("server_fields", "server makes"), ("query", "query"),
                       ("ignored_arguments", "ignored arguments"), ("not_found", "missing id answers")):
        if binding.get(key) is not None:
            value = binding[key]
            parts.append(f"{label}: {', '.join(f'{k}={v}' for k, v in value.items()) if isinstance(value, dict) else ', '.join(map(str, value)) if isinstance(value, list) else value}")
    parts.append(f"why: {binding.get('reason') or 'declared'}")
    return head + "".join(f"\n      {p}" for p in parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the bindings of the toolkits in the given documents or directories; 0, or 1 when none loads."""
    parser = argparse.ArgumentParser(prog="gecko toolkits explain", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="OpenAPI documents or directories of them")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    found: list[Toolkit] = []
    for path in args.paths:
        if not path.exists():
            print(f"error: {path} does not exist", file=sys.stderr)
            return 1
        try:
            if path.is_dir():
                found += load_toolkits([path], skip_invalid=True).toolkits.values()
            else:
                found.append(load_document(path, path.read_bytes())[0])
        except ToolkitLoadError as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            return 1
    if not found:
        print("error: no toolkit loaded from " + ", ".join(map(str, args.paths)), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({tk.name: explain_toolkit(tk) for tk in found}, indent=2))
        return 0
    for toolkit in found:
        print(f"{toolkit.name} ({toolkit.source})")
        print("\n".join(_line(row) for row in explain_toolkit(toolkit)))
    return 0


__all__ = ["explain_toolkit", "main"]
