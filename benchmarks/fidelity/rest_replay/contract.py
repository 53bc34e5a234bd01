"""What an OpenAPI document says about its REST collections, read the way a client author reads it.

A *resource* is a collection path `P` with `POST P` (create) and `GET P/{id}` (read); its other operations are
found by method on the same two paths: `GET P` (list), `PUT`/`PATCH`/`DELETE P/{id}`. For each operation the
lowest declared 2xx is its success status. The fields the server owns are the record schema's `readOnly`
properties, its `default`s and the id; list query parameters get a role from their name, schema and description
(a page-size parameter is an integer described as a maximum number of results, whatever it is called).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

ParamRole = Literal["page_size", "page", "offset", "sort", "order", "search", "filter", "other"]
_PARAM = re.compile(r"^\{([^}/]+)\}$")
_PAGE_SIZE_NAMES = {"limit", "pagesize", "perpage", "size", "top", "count", "first", "maxresults", "maxitems"}
_PAGE_SIZE_TEXT = re.compile(r"max(imum)? (number|count) of|page size|per page|number of (results|items)", re.I)
_ROLE_NAMES: dict[str, ParamRole] = {
    "page": "page", "pagenumber": "page", "offset": "offset", "start": "offset", "skip": "offset",
    "sort": "sort", "sortby": "sort", "orderby": "sort", "order": "order", "sortorder": "order",
    "direction": "order", "q": "search", "query": "search", "search": "search"}


def _plain_name(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower())


def resolve(doc: Mapping[str, Any], node: Any, depth: int = 0) -> Any:
    """`node` with every local `$ref` inlined (documents with recursive schemas are cut at depth 32)."""
    if depth > 32:
        return {}
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = doc
            for part in ref[2:].split("/"):
                target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, Mapping) else {}
            return resolve(doc, target, depth + 1)
        return {k: resolve(doc, v, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(doc, v, depth + 1) for v in node]
    return node


@dataclass(frozen=True)
class Param:
    """One query parameter of a list operation and the role it plays."""

    name: str
    schema: Mapping[str, Any]
    role: ParamRole


@dataclass(frozen=True)
class Operation:
    """One operation of a resource."""

    method: str
    path: str
    operation_id: str
    success: int | None
    """The lowest declared 2xx status (None: the document declares none)."""
    body: Mapping[str, Any] | None = None
    """The JSON request body schema."""
    params: tuple[Param, ...] = ()
    headers: tuple[str, ...] = ()
    """Response headers the success status declares (lower case)."""
    empty: bool = False
    """The success status declares no content (e.g. 204)."""


@dataclass(frozen=True)
class Resource:
    """One collection and its operations."""

    name: str
    path: str
    item_path: str
    id_param: str
    record: Mapping[str, Any]
    """The record schema (the read's 2xx response)."""
    create: Operation
    read: Operation
    listing: Operation | None = None
    replace: Operation | None = None
    update: Operation | None = None
    delete: Operation | None = None
    id_field: str = "id"
    id_type: str = "integer"
    owned: frozenset[str] = field(default_factory=frozenset)
    """Fields the server may add to what a client sent: the id, readOnly properties, declared defaults."""
    required_out: frozenset[str] = field(default_factory=frozenset)
    """Fields the record schema requires (a server must have them on a record it answers with)."""
    links: Mapping[str, str] = field(default_factory=dict)
    """Body fields that hold the id of a record of another resource (`post_id` → `posts`)."""

    def operations(self) -> dict[str, Operation]:
        """The operations the document declares, by kind."""
        kinds = {"create": self.create, "read": self.read, "list": self.listing, "replace": self.replace,
                 "update": self.update, "delete": self.delete}
        return {k: v for k, v in kinds.items() if v is not None}


def _success(operation: Mapping[str, Any]) -> int | None:
    codes = sorted(int(c) for c in (operation.get("responses") or {}) if str(c).isdigit() and 200 <= int(c) < 300)
    return codes[0] if codes else None


def _json_schema(content: Any) -> Mapping[str, Any] | None:
    if not isinstance(content, Mapping):
        return None
    for media, value in content.items():
        if "json" in media and isinstance(value, Mapping) and isinstance(value.get("schema"), Mapping):
            return value["schema"]
    return None


def _response_schema(operation: Mapping[str, Any]) -> Mapping[str, Any]:
    responses = operation.get("responses") or {}
    for code in sorted(c for c in responses if str(c).startswith("2")):
        schema = _json_schema((responses[code] or {}).get("content"))
        if schema is not None:
            return schema
    return {}


def param_role(name: str, schema: Mapping[str, Any], description: str, fields: set[str]) -> ParamRole:
    """The role of a list query parameter, from its name, schema and description."""
    plain = _plain_name(name)
    if schema.get("type") == "integer" and (plain in _PAGE_SIZE_NAMES or _PAGE_SIZE_TEXT.search(description)):
        return "page_size"
    if plain in _ROLE_NAMES:
        return _ROLE_NAMES[plain]
    if name in fields:
        return "filter"
    if re.search(r"full.?text|search", description, re.I):
        return "search"
    return "other"


def _operation(doc: Mapping[str, Any], method: str, path: str, item: Mapping[str, Any],
               fields: set[str]) -> Operation | None:
    raw = item.get(method.lower())
    if not isinstance(raw, Mapping):
        return None
    op = resolve(doc, raw)
    shared = [resolve(doc, p) for p in item.get("parameters", [])]
    params = tuple(Param(str(p["name"]), p.get("schema") or {},
                         param_role(str(p["name"]), p.get("schema") or {}, str(p.get("description", "")), fields))
                   for p in [*shared, *op.get("parameters", [])] if isinstance(p, Mapping) and p.get("in") == "query")
    body = _json_schema((op.get("requestBody") or {}).get("content"))
    success = _success(op)
    declared = (op.get("responses") or {}).get(str(success)) or {} if success is not None else {}
    headers = tuple(str(h).lower() for h in (declared.get("headers") or {}))
    return Operation(method, path, str(op.get("operationId") or f"{method} {path}"), success, body, params, headers,
                     success is not None and not declared.get("content"))


def _id_field(record: Mapping[str, Any], id_param: str) -> str:
    props = record.get("properties") or {}
    return id_param if id_param in props else "id"


def resources(doc: Mapping[str, Any]) -> list[Resource]:
    """Every collection of the document (see the module docstring)."""
    paths = doc.get("paths") or {}
    found = []
    for path, item in paths.items():
        if not isinstance(item, Mapping) or not isinstance(item.get("post"), Mapping):
            continue
        for item_path, entity in paths.items():
            head, _, last = str(item_path).rpartition("/")
            match = _PARAM.match(last)
            if match is None or head != str(path).rstrip("/") or not isinstance(entity, Mapping) \
                    or not isinstance(entity.get("get"), Mapping):
                continue
            record = resolve(doc, _response_schema(entity["get"]))
            props = record.get("properties") or {}
            fields = set(props)
            ops = {m: _operation(doc, m, p, i, fields) for m, p, i in (
                ("POST", path, item), ("GET", item_path, entity), ("PUT", item_path, entity),
                ("PATCH", item_path, entity), ("DELETE", item_path, entity))}
            ops["LIST"] = _operation(doc, "GET", path, item, fields)
            create, read = ops["POST"], ops["GET"]
            assert create is not None and read is not None
            id_field = _id_field(record, match.group(1))
            owned = {id_field} | {k for k, v in props.items() if isinstance(v, Mapping)
                                  and (v.get("readOnly") or "default" in v)}
            name = str(path).rstrip("/").rpartition("/")[2]
            found.append(Resource(
                name, str(path), str(item_path), match.group(1), record, create, read, ops["LIST"], ops["PUT"],
                ops["PATCH"], ops["DELETE"], id_field, str((props.get(id_field) or {}).get("type", "string")),
                frozenset(owned), frozenset(record.get("required") or ())))
    return _with_links(found)


def _with_links(found: list[Resource]) -> list[Resource]:
    """Each resource's fields that name another resource's record (`post_id`/`postId` → `posts`)."""
    by_singular = {r.name[:-1] if r.name.endswith("s") else r.name: r.name for r in found}
    linked = []
    for res in found:
        props = (res.create.body or {}).get("properties") or {}
        links = {}
        for key in props:
            match = re.fullmatch(r"([a-z][a-z0-9]*)(_id|Id)", key)
            if match and match.group(1) in by_singular:
                links[key] = by_singular[match.group(1)]
        linked.append(replace(res, links=links))
    return linked
