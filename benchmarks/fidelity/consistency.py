"""REST consistency: does Gecko's read of a record agree with the create, update or delete before it?

Black-box, from a toolkit's listing alone (`GET /toolkits/{name}`: each tool's method, path and argument schema):
a *collection* is a `POST P` with a `GET P/{id}` (one more path segment, a parameter). For each collection,
`RECORDS` records are created with generated, schema-valid arguments (deterministic seeds), then:

| check | passes when |
|---|---|
| `get_after_post` | `GET P/{id}` with the created id answers 200 with every argument of the create that it returns equal |
| `list_after_post` | `GET P` (if any) lists an item with that id |
| `get_after_update` | after `PUT`/`PATCH P/{id}` (if any), `GET P/{id}` returns the updated arguments |
| `get_after_delete` | after `DELETE P/{id}` (if any), `GET P/{id}` fails (an error status or an `{"error"}` body) |

The id of a created record is the response field named like the path parameter, else `id`. A toolkit without a
collection has nothing to check (its shape is not inferable this way).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchmarks.fidelity.execute import is_error_body
from benchmarks.fidelity.metrics import same
from inference.gecko import GeckoClient
from utils.httpstatus import is_success
from utils.schema.instance import UnsatisfiableSchema, generate_instance

RECORDS = 3
"""Records created per collection."""
_PARAM = re.compile(r"^\{([^}/]+)\}$")


@dataclass(frozen=True)
class Collection:
    """The operations of one REST collection, by operationId (None: the toolkit has no such operation)."""

    path: str
    id_param: str
    create: Mapping[str, Any]
    read: Mapping[str, Any]
    listing: Mapping[str, Any] | None = None
    update: Mapping[str, Any] | None = None
    delete: Mapping[str, Any] | None = None


def collections(toolkit: Mapping[str, Any]) -> list[Collection]:
    """The collections of a toolkit listing (see the module docstring)."""
    by_route = {(str(t.get("method", "")).upper(), str(t.get("path", ""))): t for t in toolkit.get("tools", [])}
    found = []
    for (method, path), create in sorted(by_route.items()):
        if method != "POST":
            continue
        for (item_method, item_path), read in sorted(by_route.items()):
            head, _, last = item_path.rpartition("/")
            match = _PARAM.match(last)
            if item_method != "GET" or head != path.rstrip("/") or match is None:
                continue
            update = by_route.get(("PATCH", item_path)) or by_route.get(("PUT", item_path))
            found.append(Collection(path, match.group(1), create, read, by_route.get(("GET", path)), update,
                                    by_route.get(("DELETE", item_path))))
    return found


def _arguments(tool: Mapping[str, Any], seed: str, fixed: Mapping[str, Any]) -> dict[str, Any] | None:
    schema = tool.get("arguments_schema") or {"type": "object"}
    try:
        value = generate_instance(schema, seed)
    except UnsatisfiableSchema:
        return None
    if not isinstance(value, dict):
        return None
    value.update({k: v for k, v in fixed.items() if k in (schema.get("properties") or {})})
    return value


def _agrees(sent: Mapping[str, Any], body: Any, skip: set[str]) -> tuple[int, int]:
    if not isinstance(body, Mapping):
        return len(sent), 0
    compared = [k for k in sent if k not in skip and k in body]
    return len(compared), sum(1 for k in compared if same(sent[k], body[k]) or sent[k] == body[k])


def _listed(body: Any, record_id: Any, id_param: str) -> bool:
    items = body if isinstance(body, list) else next(
        (v for v in body.values() if isinstance(v, list)), []) if isinstance(body, Mapping) else []
    return any(isinstance(item, Mapping) and any(same(item.get(k), record_id) for k in (id_param, "id"))
               for item in items)


async def check_toolkit(client: GeckoClient, name: str, *, labels: Mapping[str, str]) -> dict[str, Any]:
    """Run the checks of every collection of one toolkit in a fresh session; returns the record.

    Raises:
        GeckoError: Gecko failed.
    """
    listing = await client.toolkit(name)
    found = collections(listing)
    checks: list[dict[str, Any]] = []
    session = (await client.create_session({"toolkits": [name], "labels": dict(labels)})).session_id

    async def call(tool: Mapping[str, Any], arguments: Mapping[str, Any]) -> tuple[int, Any]:
        response = await client.call_tool(session, name, str(tool["name"]), dict(arguments))
        return response.status, response.body

    def record(check: str, collection: Collection, ok: bool, detail: str) -> None:
        checks.append({"check": check, "collection": collection.path, "consistent": ok, "detail": detail})

    try:
        for collection in found:
            parents: dict[str, Any] = {}
            for index in range(RECORDS):
                seed = f"{name}{collection.path}#{index}"
                sent = _arguments(collection.create, seed, parents)
                if sent is None:
                    continue
                parents = {k: v for k, v in sent.items() if f"{{{k}}}" in collection.path}
                status, body = await call(collection.create, sent)
                record_id = body.get(collection.id_param, body.get("id")) if isinstance(body, Mapping) else None
                if not is_success(status) or record_id is None:
                    record("get_after_post", collection, False, f"create answered {status} without an id")
                    continue
                key = {**parents, collection.id_param: record_id}
                status, got = await call(collection.read, key)
                compared, equal = _agrees(sent, got, set(key))
                ok = is_success(status) and compared == equal and not is_error_body(got)
                record("get_after_post", collection, ok, f"read {status}; {equal}/{compared} fields equal")
                if collection.listing is not None:
                    status, got = await call(collection.listing, parents)
                    record("list_after_post", collection, is_success(status) and _listed(got, record_id, collection.id_param),
                           f"list {status}")
                if collection.update is not None:
                    change = _arguments(collection.update, seed + "/update", key)
                    if change is not None:
                        status, _ = await call(collection.update, change)
                        status, got = await call(collection.read, key)
                        compared, equal = _agrees(change, got, set(key))
                        record("get_after_update", collection, is_success(status) and compared == equal,
                               f"read {status}; {equal}/{compared} updated fields equal")
                if collection.delete is not None and index == RECORDS - 1:
                    await call(collection.delete, key)
                    status, got = await call(collection.read, key)
                    record("get_after_delete", collection, not is_success(status) or is_error_body(got),
                           f"read after delete {status}")
    finally:
        await client.delete_session(session)
    return {"source": "rest", "toolkit": name, "collections": len(found), "checks": checks}
