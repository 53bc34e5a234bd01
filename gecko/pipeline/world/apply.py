"""The state change of a call in the world model, as a new state and the RFC 6902 patch that makes it.

Creates store the record under its collection (and advance the toolkit's counter), updates replace the fields
that changed, deletes remove the record, writes without a resource set the top-level fields named by their
arguments. A result that is an error (`{"error": …}`) changes nothing. Real results (`/update-state-from-real`)
go through the same code with the real result as the response; a real read also stores the records it returned.

The new state shares everything it does not change with the old one (states are immutable values); a collection
the session has not written yet is copied from the toolkit's defaults once (its first change), so patches stay
the size of the change. A changed collection is a copy, except within a chain of changes that owns it
(`gecko.sessions.owned`: a session's calls in one turn of its hold, the calls of one real-result sync): a
collection the chain made is changed in place, so a hot session's call costs the same with 10 records or 20,000.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from gecko.pipeline.world.records import (
    created_record,
    is_error_body,
    new_id,
    server_values,
    updated_record,
)
from gecko.pipeline.world.store import (
    ABSENT,
    Collection,
    IndexFollower,
    collection,
    find,
    follow_index,
    lookup,
    usable,
)
from gecko.sessions.owned import Owned
from gecko.toolkits.model import Operation, ResourceBinding, WorldBinding
from gecko.toolkits.resources import array_items

Patch = list[dict[str, Any]]


def pointer(*parts: str | int) -> str:
    """A JSON pointer from its unescaped parts."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class _Change:
    """A state being changed: the new top-level and toolkit objects (copied once) and the patch so far."""

    def __init__(self, state: Mapping[str, Any], world: WorldBinding, owned: Owned | None) -> None:
        self.world = world
        self.owned = owned if owned is not None else Owned()
        self.state = dict(state)
        self.patch: Patch = []
        part = state.get(world.toolkit)
        self._missing = not isinstance(part, Mapping)
        self.part: dict[str, Any] = dict(part) if isinstance(part, Mapping) else {}
        self.state[world.toolkit] = self.part

    def _ensure(self) -> None:
        """Before the first change: the toolkit's object, if the state has none yet."""
        if self._missing:
            self._missing = False
            self.patch.append({"op": "add", "path": pointer(self.world.toolkit), "value": {}})

    def set(self, key: str, value: Any) -> None:
        """`state[toolkit][key] = value`."""
        self._ensure()
        self.part[key] = value
        self.patch.append({"op": "add", "path": pointer(self.world.toolkit, key), "value": value})

    def records(self, resource: ResourceBinding, view: Collection) -> dict[str, Any] | list[Any]:
        """The collection to change in the new state: the old state's own container, changed in place, when this
        chain of changes made it (`gecko.sessions.owned`); otherwise a fresh container (a copy, or materialised from
        the defaults, or started empty, on its first change: the caller's operation is then recorded inside that
        one `add`)."""
        self._ensure()
        if view.in_state:
            current = self.part[resource.collection]
            if self.owned.holds(current):
                return current
            fresh: dict[str, Any] | list[Any] = dict(current) if isinstance(current, dict) else list(current)
        else:
            fresh = copy.deepcopy(view.records) if view.records is not None else {}
        self.owned.take(fresh)
        self.part[resource.collection] = fresh
        return fresh

    def result(self) -> tuple[dict[str, Any], Patch] | None:
        return (self.state, self.patch) if self.patch else None


def _snapshot(records: dict[str, Any] | list[Any]) -> dict[str, Any] | list[Any]:
    """The collection as it is now, for a patch: the container itself may change in place later in the chain."""
    return dict(records) if isinstance(records, dict) else list(records)


def _follower(view: Collection, resource: ResourceBinding, position: str | int) -> IndexFollower | None:
    """Before a change at `position` of a collection the state holds: what its id index needs to follow it."""
    if not view.in_state or view.records is None:
        return None
    return follow_index(view.records, resource.id_field, [position])


def _store(change: _Change, resource: ResourceBinding, view: Collection, position: str | int | None,
           record: Any, record_id: Any, fields: Mapping[str, Any] | None = None) -> None:
    records = change.records(resource, view)
    base = (change.world.toolkit, resource.collection)
    where: str | int
    if isinstance(records, dict):
        where = str(record_id) if position is None else str(position)
    else:
        where = len(records) if position is None else int(position)
    follower = _follower(view, resource, where)
    if isinstance(records, dict) or position is not None:
        records[where] = record  # type: ignore[index]
    else:
        records.append(record)
    target = (*base, where)
    if follower is not None:
        follower.changed(records)
    if not view.in_state:
        change.patch.append({"op": "add", "path": pointer(*base), "value": _snapshot(records)})
    elif fields is not None and isinstance(record, Mapping):
        change.patch.extend({"op": "add", "path": pointer(*target, k), "value": v} for k, v in fields.items())
    else:
        change.patch.append({"op": "add", "path": pointer(*target) if isinstance(records, dict) or position is not None
                             else pointer(*base, "-"), "value": record})


def _remove(change: _Change, resource: ResourceBinding, view: Collection, position: str | int) -> None:
    records = change.records(resource, view)
    base = (change.world.toolkit, resource.collection)
    follower = _follower(view, resource, position)
    moved = False
    if isinstance(records, dict):
        records.pop(str(position), None)
    else:
        records.pop(int(position))
        moved = int(position) < len(records)  # the records after it moved up one place
    if follower is not None:
        follower.changed(records, moved)
    if view.in_state:
        change.patch.append({"op": "remove", "path": pointer(*base, position)})
    else:
        change.patch.append({"op": "add", "path": pointer(*base), "value": _snapshot(records)})


def _create(change: _Change, state: Mapping[str, Any], op: Operation, resource: ResourceBinding,
            arguments: Mapping[str, Any], response: Any, seed: str, real: bool) -> None:
    view = collection(state, change.world, resource)
    proposed = response.get(resource.id_field, ABSENT) if isinstance(response, Mapping) else ABSENT
    record_id = proposed if proposed is not ABSENT and proposed is not None else new_id(
        state, change.world, resource, view.records, ABSENT, lambda salt: None, seed)
    record = created_record(arguments, resource, record_id, server_values(resource, response))
    if real and isinstance(response, Mapping):  # a real server's record is the truth, whatever it holds
        record.update({k: v for k, v in response.items()
                       if resource.record_fields is None or k in resource.record_fields})
        record[resource.id_field] = record_id
    found = find(view.records, resource.id_field, record_id) if view.records is not None else None
    _store(change, resource, view, found[0] if found else None, record, record_id)
    if resource.counter:
        value, _ = lookup(state, change.world, resource.counter)
        if isinstance(value, int) and not isinstance(value, bool) and str(record_id) == str(value):
            change.set(resource.counter, value + 1)


def _update(change: _Change, state: Mapping[str, Any], resource: ResourceBinding, arguments: Mapping[str, Any],
            response: Any) -> None:
    record_id = arguments.get(resource.id_argument) if resource.id_argument else None
    if record_id is None:
        return
    view = collection(state, change.world, resource)
    found = find(view.records, resource.id_field, record_id) if view.records is not None else None
    if found is None:
        if view.known:
            return  # closed world: the record does not exist (the response said so)
        record = updated_record({resource.id_field: record_id}, arguments, resource)
        _store(change, resource, view, None, record, record_id)
        return
    position, current = found
    if not isinstance(current, Mapping):
        return
    updated = updated_record(current, arguments, resource, resource.arguments)
    changed = {k: v for k, v in updated.items() if k not in current or current[k] != v}
    if any(k not in updated for k in current):  # fields gone (PUT, a merge patch's null): the record is replaced
        _store(change, resource, view, position, updated, record_id)
    elif changed:
        _store(change, resource, view, position, updated, record_id, changed)


def _delete(change: _Change, state: Mapping[str, Any], resource: ResourceBinding,
            arguments: Mapping[str, Any]) -> None:
    record_id = arguments.get(resource.id_argument) if resource.id_argument else None
    view = collection(state, change.world, resource)
    found = find(view.records, resource.id_field, record_id) if view.records is not None and record_id is not None \
        else None
    if found is not None:
        _remove(change, resource, view, found[0])


def _set_fields(change: _Change, state: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    for name in change.world.fields:
        if name in arguments:
            current, _ = lookup(state, change.world, name)
            if current is ABSENT or current != arguments[name] or type(current) is not type(arguments[name]):
                change.set(name, arguments[name])


def world_change(state: Mapping[str, Any], op: Operation, arguments: Mapping[str, Any], response: Any,
                 seed: str, owned: Owned | None = None, real: bool = False) -> tuple[dict[str, Any], Patch] | None:
    """The state after a successful write in the world model, and its patch; None when the world model does not
    place the call or nothing changes.

    Args:
        state: the state before the call.
        op: the operation (its `world` binding decides).
        arguments: the call's arguments.
        response: its response (a simulated one, or a real tool's result).
        seed: the call's seed (the one the response side used).
        owned: the containers of `state` this change may change in place (its chain made them); the containers it
            makes are added. None: `state` stays as it is.
        real: the response is a real tool's result: a create stores every record field it holds (a simulated
            response gives only the server-owned fields: the record is what was sent plus what the server makes).
    """
    world = op.world
    if world is None or is_error_body(response) or not usable(state, world):
        return None
    resource = world.resource
    change = _Change(state, world, owned)
    if resource is None:
        if op.access != "write" or not world.fields:
            return None
        _set_fields(change, state, arguments)
    elif resource.action == "create":
        _create(change, state, op, resource, arguments, response, seed, real)
    elif resource.action == "update":
        _update(change, state, resource, arguments, response)
    elif resource.action == "delete":
        _delete(change, state, resource, arguments)
    else:
        return None
    return change.result()


def observe(state: Mapping[str, Any], op: Operation, arguments: Mapping[str, Any],
            result: Any, owned: Owned | None = None) -> tuple[dict[str, Any], Patch] | None:
    """The state after a *real* read: the records it returned are stored under their resource (the real world is
    what the simulation should agree with). None when the read returns no records of a bound resource. `owned` as
    for `world_change`."""
    world = op.world
    resource = world.resource if world is not None else None
    if (world is None or resource is None or is_error_body(result) or resource.action not in ("read", "list")
            or not usable(state, world)):
        return None
    found: list[tuple[Any, Mapping[str, Any]]] = []
    if resource.action == "read" and isinstance(result, Mapping):
        record_id = result.get(resource.id_field, arguments.get(resource.id_argument or ""))
        if record_id is not None:
            found.append((record_id, result))
    elif resource.action == "list":
        shape = array_items(op.response_schema) if op.response_schema is not None else None
        items = result if shape is None or shape[0] is None else (
            result.get(shape[0]) if isinstance(result, Mapping) else None)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, Mapping) and item.get(resource.id_field) is not None:
                found.append((item[resource.id_field], item))
    if not found:
        return None
    change = _Change(state, world, owned)
    for record_id, record in found:
        view = collection(change.state, world, resource)
        position = find(view.records, resource.id_field, record_id) if view.records is not None else None
        if position is not None and position[1] == record:
            continue
        _store(change, resource, view, position[0] if position else None, dict(record), record_id)
    return change.result()


__all__ = ["observe", "pointer", "world_change"]
