"""Build a tool's arguments object from an HTTP request made on the document's own method and path."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import QueryParams

from gecko.toolkits.model import BODY_KEY, Operation


def _schema_type(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def coerce(raw: str, schema: Any) -> Any:
    """Parse a path/query/header string by the parameter's schema type; leave it a string if it does not parse."""
    kind = _schema_type(schema)
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
    except ValueError:
        return raw
    if kind == "boolean" and raw.lower() in ("true", "false", "1", "0"):
        return raw.lower() in ("true", "1")
    if kind == "null" and raw in ("", "null"):
        return None
    return raw


def arguments_from_request(
    operation: Operation, path_params: dict[str, str], query: QueryParams, headers: Any, body: Any
) -> dict[str, Any]:
    """Parameters by name (typed by their schemas) plus the body (merged properties or under `body`)."""
    args: dict[str, Any] = {}
    for param in operation.parameters:
        if param.location == "path" and param.name in path_params:
            args[param.name] = coerce(path_params[param.name], param.schema)
        elif param.location == "query":
            values = query.getlist(param.name)
            if not values:
                continue
            if _schema_type(param.schema) == "array":
                parts = [p for v in values for p in v.split(",")] if len(values) == 1 else values
                items = param.schema.get("items") if isinstance(param.schema, dict) else None
                args[param.name] = [coerce(p, items) for p in parts]
            else:
                args[param.name] = coerce(values[-1], param.schema)
        elif param.location == "header" and param.name in headers:
            args[param.name] = coerce(headers[param.name], param.schema)
    known = {p.name for p in operation.parameters if p.location == "query"}
    for name in query.keys():
        if name not in known and name not in args:
            args[name] = query.get(name)
    if body is not None:
        if operation.body_mode == "merged" and isinstance(body, dict):
            args.update(body)
        else:
            args[BODY_KEY] = body
    return args
