"""Bindings of a twin's tools to the world model from the ids captured calls issued and sent back: creates, reads,
updates and deletes (`x-gecko-resource`), their access where the server states none, and their not-found answers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gecko.toolkits.names import words
from gecko.toolkits.resources import plural
from gecko.twin.evidence import ToolFacts, issuing_paths
from gecko.twin.shapes import MEDIA, NOT_FOUND_SCHEMA, error_branch, required_arguments, set_result

DELETE_VERBS = frozenset({"delete", "remove", "destroy", "drop", "erase", "purge", "discard"})
WRITE_VERBS = frozenset({"update", "edit", "modify", "change", "set", "delete", "remove", "archive", "cancel", "close",
                         "complete", "mark", "approve", "reject", "resolve", "reopen", "move", "rename", "assign"})


def _noun(name: str) -> str:
    parts = words(name.replace(".", "_"))  # every dotted segment: `file.id` is a file's id
    if parts and parts[-1] in ("id", "ids"):
        parts = parts[:-1]
    return "_".join(parts) or "record"


def _verb(name: str) -> str:
    words = re.findall(r"[A-Za-z][a-z0-9]*", name)
    return words[0].lower() if words else ""


def bind(operations: Mapping[str, dict[str, Any]], facts: Mapping[str, ToolFacts],
         learned: dict[str, list[str]]) -> list[str]:
    """Creates (a top-level field issues new ids), reads (only ids required, none issued, the id echoed), and the
    updates and deletes of what they created, written into `operations`; each binding is noted in `learned` (tool →
    what was learned). Returns the collections of the created records.

    A twin starts with none of the server's records, so those collections start empty (`x-gecko-default-state`):
    an id the twin never issued is not found, in the tool's own error convention.
    """
    issuers: dict[str, tuple[str, str]] = {}
    collections: list[str] = []
    for name, tool in facts.items():
        top = [p for p in issuing_paths(tool) if "." not in p and "[" not in p]
        op = operations.get(name)
        if not top or op is None or op.get("x-gecko-resource") is not None:
            continue
        id_field = top[0]
        noun = _noun(id_field) if id_field != "id" else _noun(name.split("_", 1)[-1])
        issuers[f"{name}.{id_field}"] = (noun, id_field)
        collection = plural(noun)
        collections += [collection] if collection not in collections else []
        op["x-gecko-resource"] = {"resource": noun, "action": "create", "id_field": id_field, "collection": collection}
        _learned_access(op, "write", "learned: its results carry new ids (a create)")
        learned.setdefault(name, []).append("create")
    for name, tool in facts.items():
        op = operations.get(name)
        if op is None or op.get("x-gecko-resource") is not None or issuing_paths(tool):
            continue
        top_ids = {a: s for a, s in tool.id_arguments.items() if "." not in a and "[" not in a and s in issuers}
        if not top_ids or not required_arguments(op) <= set(top_ids) or not tool.echoes_id or _verb(name) in WRITE_VERBS:
            continue
        argument, (noun, id_field) = _main_id(top_ids, issuers)
        op["x-gecko-resource"] = {"resource": noun, "action": "read", "id": argument, "id_field": id_field,
                                  "collection": plural(noun)}
        _learned_access(op, "read", "learned: it only takes an issued id, issues none and returns that record")
        learned.setdefault(name, []).append("read")
    by_name = {a: s for tool in facts.values() for a, s in tool.id_arguments.items() if s in issuers}
    for name, op in operations.items():
        tool = facts.get(name) or ToolFacts()
        top_ids = {a: s for a, s in tool.id_arguments.items() if "." not in a and "[" not in a and s in issuers}
        if not top_ids:  # no capture sent it an issued id: an argument named like one that carried them elsewhere
            top_ids = {a: by_name[a] for a in sorted(required_arguments(op)) if a in by_name}
        top_ids = {a: s for a, s in top_ids.items() if a not in tool.accepts_unknown}
        if op.get("x-gecko-resource") is not None or issuing_paths(tool) or not top_ids:
            continue
        argument, (noun, id_field) = _main_id(top_ids, issuers)
        action = "delete" if _verb(name) in DELETE_VERBS else "update"
        op["x-gecko-resource"] = {"resource": noun, "action": action, "id": argument, "id_field": id_field,
                                  "collection": plural(noun)}
        learned.setdefault(name, []).append(action)
    return collections


def not_found_answers(operations: Mapping[str, dict[str, Any]], server_kind: str | None) -> None:
    """Every bound read, update or delete can answer not-found in its convention (its own, else the server's): an
    `{error}` branch in its result (in-band errors) or a declared 404 (`isError`)."""
    for op in operations.values():
        binding = op.get("x-gecko-resource")
        if not isinstance(binding, dict) or binding.get("action") not in ("read", "update", "delete"):
            continue
        convention = op.get("x-gecko-error-convention") or {}
        kind = convention.get("kind") or server_kind
        responses = op.setdefault("responses", {})
        if kind == "isError":
            responses.setdefault("404", {"description": "Not found: the server answers isError with a message "
                                                        "(learned from captures).",
                                         "content": {MEDIA: {"schema": NOT_FOUND_SCHEMA}}})
        elif kind == "body":
            schema = ((responses.get("200") or {}).get("content") or {}).get(MEDIA, {}).get("schema") or {}
            if not any(isinstance(b, dict) and b.get("required") == ["error"] for b in schema.get("anyOf") or []):
                success = {"type": "object"} if op.get("x-gecko-response-origin") == "generic" else schema
                set_result(op, {"anyOf": [success, error_branch([])]})
                if op.get("x-gecko-response-origin") == "generic":
                    op["x-gecko-response-origin"] = "learned"


def _main_id(ids: Mapping[str, str], issuers: Mapping[str, tuple[str, str]]) -> tuple[str, tuple[str, str]]:
    """The id argument a tool acts on: the one named like its record's id field, else the first."""
    for argument, source in ids.items():
        if argument == issuers[source][1]:
            return argument, issuers[source]
    argument = next(iter(ids))
    return argument, issuers[ids[argument]]


def _learned_access(op: dict[str, Any], access: str, reason: str) -> None:
    """Set the access unless the server stated it (annotations) or the user did."""
    provenance = op.setdefault("x-gecko-provenance", {})
    if "access" in provenance and not str(provenance["access"]).startswith("learned"):
        return
    op["x-gecko-access"] = access
    provenance["access"] = reason


__all__ = ["bind", "not_found_answers"]
