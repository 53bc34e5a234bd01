"""Reading the world model out of a session state: collections, records, ids, filters.

A toolkit's part of the state is `state[toolkit]`. Each of its keys falls back to the toolkit's
`x-gecko-default-state` until the session writes it, so a declared default state seeds records without an
`/init-session-state`. A collection the session state and the defaults both lack is *unknown*: the world has not
seen that resource yet, and reads of it stay open-world (generated, as without a world model). Once a collection
exists it is *known* (closed world): a missing id is not found.

Finding a record by id, and the ids a collection holds, go through `id_index`: built once per collection value
(states are immutable values, so a collection that did not change keeps its index) with C-level passes over the
records, never a Python loop per record. A changed collection is a copy of the old one; its index is the old one
moved over and changed in the size of the change (`index_changed`): by the call that made the change, and by a
worker that catches up on it, whose store reports the copies it makes applying the delta (`observe_copies`). So
neither a call nor catching up rebuilds or copies an index: their cost does not grow with the records a session
created. (The old value, if it is ever looked up again, e.g. by a fork made before the change, builds its own.)
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from gecko.sessions.versions import Copied, observe_copies
from gecko.toolkits.model import QueryRoles, ResourceBinding, WorldBinding
from gecko.toolkits.resources import range_field

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
    for position, record in records.items() if isinstance(records, dict) else enumerate(records):
        yield position, _record_id(records, position, record, id_field), record


def _record_id(records: dict[str, Any] | list[Any], position: str | int, record: Any, id_field: str) -> Any:
    if isinstance(records, dict):
        return record.get(id_field, position) if isinstance(record, Mapping) else position
    return record.get(id_field) if isinstance(record, Mapping) else record


INDEXES_KEPT = 1024
"""Collection values whose id index is kept (the most recently used). Enough for every collection of the sessions
whose states a process keeps decoded (`STATE_CACHE_SESSIONS`, a few collections each): with fewer, many sessions
written at once (64 connections, one session each) evicted each other's indexes and every create rebuilt its
collection's index, O(records) per call. An index costs about one dict entry per record, beside a state that
holds the records themselves."""
_INTEGER = re.compile(r"-?[0-9]+")


@dataclass
class IdIndex:
    """The ids of one collection value, as text: where each first appears."""

    first: dict[str, str | int]
    """Id text → position (object key or list index) of the first record with that id."""
    unique: bool = False
    """No two records share an id text (then each text has one position, whatever the order of the records)."""
    _top: int | None = field(default=None, init=False)
    _top_known: bool = field(default=False, init=False)

    def __contains__(self, text: str) -> bool:
        return text in self.first

    @property
    def top(self) -> int | None:
        """The largest id that is an integer (or integer text), None when there is none."""
        if not self._top_known:
            self._top = max(map(int, filter(_INTEGER.fullmatch, self.first)), default=None)
            self._top_known = True
        return self._top


class _IndexCache:
    """The id indexes of the last `INDEXES_KEPT` collection values, by identity (each entry keeps its value
    alive, so an identity is never reused while cached). Collections are immutable values once in a state."""

    def __init__(self) -> None:
        self._entries: OrderedDict[int, tuple[Any, str, int, IdIndex]] = OrderedDict()
        self.builds = 0
        """Indexes built from the records (not carried over): a count for tests."""

    def entry(self, records: dict[str, Any] | list[Any]) -> tuple[str, IdIndex] | None:
        """(id field, index) of a collection value that has one."""
        cached = self._entries.get(id(records))
        if cached is not None and cached[0] is records and cached[2] == len(records):
            self._entries.move_to_end(id(records))
            return cached[1], cached[3]
        return None

    def cached(self, records: dict[str, Any] | list[Any], id_field: str) -> IdIndex | None:
        entry = self.entry(records)
        return entry[1] if entry is not None and entry[0] == id_field else None

    def drop(self, records: dict[str, Any] | list[Any]) -> None:
        """Forget the index of this collection value."""
        cached = self._entries.get(id(records))
        if cached is not None and cached[0] is records:
            del self._entries[id(records)]

    def put(self, records: dict[str, Any] | list[Any], id_field: str, index: IdIndex) -> None:
        key = id(records)
        self._entries[key] = (records, id_field, len(records), index)
        self._entries.move_to_end(key)
        while len(self._entries) > INDEXES_KEPT:
            self._entries.popitem(last=False)

    def get(self, records: dict[str, Any] | list[Any], id_field: str) -> IdIndex:
        index = self.cached(records, id_field)
        if index is None:
            index = _build_index(records, id_field)
            self.builds += 1
            self.put(records, id_field, index)
        return index


_INDEXES = _IndexCache()


def _build_index(records: dict[str, Any] | list[Any], id_field: str) -> IdIndex:
    positions: list[Any]
    try:  # map over C functions: no Python code runs per record
        if isinstance(records, dict):
            positions = list(records)
            ids = list(map(dict.get, records.values(), repeat(id_field), positions))
        else:
            positions = list(range(len(records)))
            ids = list(map(dict.get, records, repeat(id_field)))
    except TypeError:  # a record that is not an object
        positions, ids = [], []
        for position, rid, _ in entries(records, id_field):
            positions.append(position)
            ids.append(rid)
    texts = list(map(str, ids))
    texts.reverse()
    positions.reverse()
    first = dict(zip(texts, positions))  # the last write of a text wins: its first record
    return IdIndex(first, unique=len(first) == len(positions))


def id_index(records: dict[str, Any] | list[Any], id_field: str) -> IdIndex:
    """The ids of a collection (built once per collection value, or carried over from the one it changed)."""
    return _INDEXES.get(records, id_field)


def _at(records: dict[str, Any] | list[Any], position: str | int) -> Any:
    return records[str(position)] if isinstance(records, dict) else records[int(position)]


def _text_at(records: dict[str, Any] | list[Any], position: str | int, id_field: str) -> str | None:
    """The id text of the record at `position`, None when there is none."""
    if isinstance(records, dict):
        if position not in records:
            return None
    elif not 0 <= int(position) < len(records):
        return None
    return str(_record_id(records, position, _at(records, position), id_field))


def _derive(index: IdIndex, before: list[tuple[str | int, str | None]], new: dict[str, Any] | list[Any],
            id_field: str) -> IdIndex | None:
    """The index of a collection changed at some positions, carried over to `new` (the collection after the
    change): `before` holds each changed position with the id text it had (None: no member there); no other member
    moved. None when that would take more than the change: a removed or changed id in a collection where ids
    repeat, or a new id that another record has already, except at the end.

    The carried index takes over `index.first` and changes it in place (in the size of the change, never a copy
    of every id): the caller drops the old collection's entry. Nothing is changed when the answer is None."""
    removed: list[tuple[str, str | int]] = []
    added: list[tuple[str, str | int, bool]] = []
    for position, was in before:
        after = _text_at(new, position, id_field)
        if was == after:
            continue
        if was is not None:
            removed.append((was, position))
        if after is not None:
            added.append((after, position, was is None))
    if not removed and not added:
        return index  # the same ids at the same places
    if removed and not index.unique:
        return None
    first = index.first
    gone = {text for text, _ in removed}
    if len(gone) < len(removed) or any(first.get(text) != position for text, position in removed):
        return None
    unique, seen, new_texts = index.unique, set(), []
    for text, position, appended in added:
        if text in seen:
            return None  # two new records with one id: which comes first is not known here
        seen.add(text)
        if text not in first or text in gone:
            new_texts.append((text, position))
        elif appended:  # an id a record before it has: that one stays first
            unique = False
        else:
            return None
    for text in gone:  # checked above: from here on the change cannot fail
        del first[text]
    first.update(new_texts)
    derived = IdIndex(first, unique)
    top = index._top
    if index._top_known and (top is None or all(int(t) < top for t, _ in removed if _INTEGER.fullmatch(t))):
        tops = [int(t) for t, _, _ in added if _INTEGER.fullmatch(t)] + ([] if top is None else [top])
        derived._top, derived._top_known = max(tops, default=None), True
    return derived  # unless known above, the largest id is found again when asked for (it may have gone)


@dataclass
class IndexFollower:
    """A collection about to change at some positions, as its id index needs it to follow the change: the index
    (None: it has none) and the id text at each of those positions before the change."""

    old: dict[str, Any] | list[Any]
    id_field: str
    index: IdIndex | None
    before: list[tuple[str | int, str | None]]

    def changed(self, new: dict[str, Any] | list[Any], moved: bool = False) -> None:
        """The change is made: `new` is the collection after it (a copy of `old`, or `old` itself changed in place);
        `moved`: other members changed places too. The index moves over to `new`, changed in the size of the
        change; when that needs more than the change, `new`'s is built when asked for (and `old`'s entry, if `old`
        was changed in place, is dropped)."""
        derived = None if self.index is None or moved else _derive(self.index, self.before, new, self.id_field)
        if derived is not None or new is self.old:
            _INDEXES.drop(self.old)  # its index is `new`'s now (or out of date): built again if looked up again
        if derived is not None:
            _INDEXES.put(new, self.id_field, derived)


def follow_index(records: dict[str, Any] | list[Any], id_field: str, positions: Iterable[str | int]) -> IndexFollower:
    """Call before changing the collection `records` at `positions` (in a copy, or in place in a container nobody
    else holds, `gecko.sessions.owned`); then `changed` on the answer, so the next call need not build the index."""
    index = _INDEXES.cached(records, id_field)
    return IndexFollower(records, id_field, index,
                         [] if index is None else [(p, _text_at(records, p, id_field)) for p in positions])


def index_changed(old: dict[str, Any] | list[Any], new: dict[str, Any] | list[Any], id_field: str,
                  positions: Iterable[str | int], moved: bool = False) -> None:
    """Carry `old`'s id index over to `new`: a copy of `old` with the members at `positions` added, replaced or
    removed (see `IndexFollower.changed`)."""
    follow_index(old, id_field, positions).changed(new, moved)


def _follow_copy(copied: Copied) -> None:
    """A container the session store copied to apply a delta: carry its id index over, if it has one."""
    entry = _INDEXES.entry(copied.old)
    if entry is not None:
        index_changed(copied.old, copied.new, entry[0], copied.keys, copied.moved)


observe_copies(_follow_copy)


def find(records: dict[str, Any] | list[Any], id_field: str, record_id: Any) -> tuple[str | int, Any] | None:
    """(position, record) of the record with this id, or None."""
    if isinstance(records, dict) and str(record_id) in records:
        key = str(record_id)
        return key, records[key]
    if isinstance(record_id, bool) or record_id is None:
        return None
    position = id_index(records, id_field).first.get(str(record_id))
    if position is None:
        return None
    record = _at(records, position)
    if same_id(_record_id(records, position, record, id_field), record_id):
        return position, record
    for position, rid, record in entries(records, id_field):  # the first record with that text is no id (a boolean)
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
    search = resource.query.search if resource.query is not None else None
    if search is not None and arguments.get(search) not in (None, ""):
        needle = str(arguments[search]).lower()
        if not any(needle in str(v).lower() for v in _texts(record)):
            return False
    for name in resource.filters:
        value = arguments.get(name)
        if value is None:
            continue
        if name == resource.collection and isinstance(value, list):
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


def _count(value: Any) -> int | None:
    """A non-negative integer argument (integer text too: query strings are text), else None."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _sort_key(value: Any) -> tuple[int, Any]:
    """Missing values last; numbers before text; text case-insensitively."""
    if value is None:
        return (3, 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value)
    return (1, str(value).lower())


def _sorted(chosen: list[tuple[Any, Any]], query: QueryRoles, arguments: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    field_arg = arguments.get(query.sort) if query.sort else None
    fields = field_arg if isinstance(field_arg, list) else [field_arg] if isinstance(field_arg, str) else []
    order = str(arguments.get(query.order, "")).lower() if query.order else ""
    descending_all = order.startswith("desc")
    for spec in reversed([str(f).strip() for f in fields if str(f).strip()][:4]):
        for part in reversed([p.strip() for p in spec.split(",") if p.strip()]):
            descending = descending_all or part.startswith("-")
            name = part.lstrip("+-").split(":")[0]
            descending = descending or part.lower().endswith(":desc")
            chosen = sorted(chosen, key=_by_field(name), reverse=descending)
    return chosen


def _by_field(name: str) -> Callable[[tuple[Any, Any]], tuple[int, Any]]:
    """The sort key of (id, record) pairs by one field of the record."""
    def key(item: tuple[Any, Any]) -> tuple[int, Any]:
        return _sort_key(item[1].get(name) if isinstance(item[1], Mapping) else None)
    return key


def _start(chosen: list[tuple[Any, Any]], query: QueryRoles, arguments: Mapping[str, Any],
           size: int | None) -> int:
    """Where the page starts: the offset, else the page (1-based; times the page size), else after the cursor."""
    offset = _count(arguments.get(query.offset)) if query.offset else None
    if offset is not None:
        return offset
    page = _count(arguments.get(query.page)) if query.page else None
    if page is not None and size is not None:
        return max(page - 1, 0) * size
    cursor = arguments.get(query.cursor) if query.cursor else None
    if cursor not in (None, ""):
        after = next((i + 1 for i, (rid, _) in enumerate(chosen) if same_id(rid, cursor)), None)
        return after if after is not None else (_count(cursor) or 0)
    return 0


def select(records: dict[str, Any] | list[Any], resource: ResourceBinding,
           arguments: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """(id, record) of the records a list call selects: its filters and search applied, then sorted, then the
    page its offset, page number or cursor and its page size cut out."""
    chosen = [(rid, record) for _, rid, record in entries(records, resource.id_field)
              if _matches(record, rid, resource, arguments)]
    query = resource.query
    if query is None:
        return chosen
    if query.sort or query.order:
        chosen = _sorted(chosen, query, arguments)
    size = _count(arguments.get(query.limit)) if query.limit else None
    paged = query.page is not None and _count(arguments.get(query.page)) is not None
    if size is None and paged:
        size = query.default_limit or DEFAULT_PAGE_SIZE
    start = _start(chosen, query, arguments, size)
    return chosen[start:] if size is None else chosen[start:start + size]


DEFAULT_PAGE_SIZE = 10
"""The page size of a call that names a page but no size, when the document declares no default."""
