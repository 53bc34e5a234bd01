"""Reading the world model out of a session state: collections, records, ids, filters.

A toolkit's part of the state is `state[toolkit]`. Each of its keys falls back to the toolkit's
`x-gecko-default-state` until the session writes it, so a declared default state seeds records without an
`/init-session-state`. A collection the session state and the defaults both lack is *unknown*: the world has not
seen that resource yet, and reads of it stay open-world (generated, as without a world model). Once a collection
exists it is *known* (closed world): a missing id is not found.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gecko.toolkits.model import ResourceBinding, WorldBinding
from gecko.toolkits.resources import LIMIT_ARGUMENTS, SEARCH_ARGUMENTS, range_field

ABSENT: Any = object()
"""A key that neither the session state nor the defaults hold."""


def toolkit_state(state: Mapping[str, Any], world: WorldBinding) -> Mapping[str, Any]:
    """The toolkit's part of the session state (empty when the session has none)."""
    part = state.get(world.toolkit)
    return part if isinstance(part, Mapping) else {}


def usable(state: Mapping[str, Any], world: WorldBinding) -> bool:
    """Whether the world model may use `state[toolkit]`: absent, or an object (a session that keeps something else
    under the toolkit's name keeps it untouched, and the world model stays out)."""
    return not isinstance(state, Mapping) or world.toolkit not in state or isinstance(state[world.toolkit], Mapping)


def lookup(state: Mapping[str, Any], world: WorldBinding, key: str) -> tuple[Any, bool]:
    """(value of `state[toolkit][key]`, True) when the session holds it, else (the default or ABSENT, False)."""
    part = toolkit_state(state, world)
    if key in part:
        return part[key], True
    return world.defaults.get(key, ABSENT), False


@dataclass(frozen=True)
class Collection:
    """The records of one resource as a state holds them."""

    records: dict[str, Any] | list[Any] | None
    """An object keyed by id, or a list of records; None: unknown (neither the state nor the defaults hold it)."""
    in_state: bool
    """The session state holds it (False: it comes from the toolkit's defaults, or is unknown)."""

    @property
    def known(self) -> bool:
        """Whether the world has this collection (then a missing id is not found)."""
        return self.records is not None


def collection(state: Mapping[str, Any], world: WorldBinding, resource: ResourceBinding) -> Collection:
    """The resource's collection in `state`."""
    value, in_state = lookup(state, world, resource.collection)
    return Collection(value if isinstance(value, (dict, list)) else None, in_state)


def same_id(a: Any, b: Any) -> bool:
    """Ids compare by their text (`7` is `"7"`: JSON object keys are strings); booleans are never ids."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return False
    return str(a) == str(b)


def entries(records: dict[str, Any] | list[Any], id_field: str) -> Iterator[tuple[str | int, Any, Any]]:
    """(position, record id, record) of every record: the position is the object key or the list index. A
    record's id is its id field, else its object key (a list item without one is its own id)."""
    if isinstance(records, dict):
        for key, record in records.items():
            yield key, record.get(id_field, key) if isinstance(record, Mapping) else key, record
    else:
        for index, record in enumerate(records):
            yield index, record.get(id_field) if isinstance(record, Mapping) else record, record


def find(records: dict[str, Any] | list[Any], id_field: str, record_id: Any) -> tuple[str | int, Any] | None:
    """(position, record) of the record with this id, or None."""
    if isinstance(records, dict) and str(record_id) in records:
        key = str(record_id)
        return key, records[key]
    for position, rid, record in entries(records, id_field):
        if same_id(rid, record_id):
            return position, record
    return None


def _field_values(record: Any, name: str, depth: int = 0) -> Iterator[Any]:
    """Values of `name` in a record, at its top level or in nested objects (`zip` in `address`)."""
    if not isinstance(record, Mapping) or depth > 2:
        return
    if name in record:
        yield record[name]
    for value in record.values():
        if isinstance(value, Mapping):
            yield from _field_values(value, name, depth + 1)


def _matches(record: Any, record_id: Any, resource: ResourceBinding, arguments: Mapping[str, Any]) -> bool:
    for name in resource.filters:
        value = arguments.get(name)
        if value is None or name.lower() in LIMIT_ARGUMENTS:
            continue
        lower = name.lower()
        if lower in SEARCH_ARGUMENTS:
            needle = str(value).lower()
            if not any(needle in str(v).lower() for v in _texts(record)):
                return False
        elif name == resource.collection and isinstance(value, list):
            if not any(same_id(record_id, v) for v in value):
                return False
        elif bounds := range_field(name):
            kind, field_name = bounds
            found = [v for v in _field_values(record, field_name) if isinstance(v, (int, float))]
            if not found or (kind == "min" and found[0] < value) or (kind == "max" and found[0] > value):
                return False
        elif not any(v == value or same_id(v, value) for v in _field_values(record, name)):
            return False
    for argument, field_name in resource.parents:
        if argument in arguments and not any(same_id(v, arguments[argument])
                                             for v in _field_values(record, field_name)):
            return False
    return True


def _texts(record: Any) -> Iterator[str]:
    if isinstance(record, str):
        yield record
    elif isinstance(record, Mapping):
        for value in record.values():
            yield from _texts(value)
    elif isinstance(record, list):
        for value in record:
            yield from _texts(value)


def select(records: dict[str, Any] | list[Any], resource: ResourceBinding,
           arguments: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """(id, record) of the records a list call selects: its filters applied, then its limit."""
    chosen = [(rid, record) for _, rid, record in entries(records, resource.id_field)
              if _matches(record, rid, resource, arguments)]
    for name in resource.filters:
        value = arguments.get(name)
        if name.lower() in LIMIT_ARGUMENTS and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            chosen = chosen[:value]
    return chosen
