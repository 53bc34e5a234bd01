"""What a bound call does to a record, shared by the response (`respond.py`) and the state (`apply.py`) sides, so
both agree: the id a create gives its record, the record it creates, the record an update leaves, and how state
values are laid over a generated response without breaking its schema."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gecko.pipeline.world.store import ABSENT, IdIndex, id_index, lookup
from gecko.toolkits.model import ResourceBinding, WorldBinding
from utils.jsonutil import content_hash

UPDATE_BAGS = ("updates", "changes", "fields", "patch", "attributes")
"""Object arguments whose members are field updates (`edit_ticket(ticket_id, updates={...})`)."""
ID_ATTEMPTS = 8


def call_seed(session_id: str, tool: str, arguments: Any) -> str:
    """The seed of a call's generated values: its session, tool and canonical arguments. The response side
    generates with it and the state side derives the same new ids from it."""
    return content_hash(session_id, tool, arguments)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_error_body(body: Any) -> bool:
    """A result that reports a failure: an object whose only key is `error`."""
    return isinstance(body, Mapping) and set(body) == {"error"}


def overlay(base: Any, values: Mapping[str, Any], allowed: frozenset[str] | None,
            check: Callable[[Any], bool]) -> Any:
    """`base` (a valid response) with `values` laid over its top-level fields where the result stays valid.

    Args:
        base: the generated response; only objects are changed.
        values: field → value from the state (a record, the toolkit's fields).
        allowed: the fields the response declares (None: an object with no declared properties: any field).
        check: the response schema's validity test.
    """
    if not isinstance(base, dict):
        return base
    keys = [k for k in values if allowed is None or k in allowed]
    if not keys:
        return base
    candidate = {**base, **{k: values[k] for k in keys}}
    if check(candidate):
        return candidate
    out = dict(base)
    for key in keys:
        trial = {**out, key: values[key]}
        if check(trial):
            out = trial
    return out


_EMPTY = IdIndex({})


def fallback_id(seed: str, taken: IdIndex) -> str:
    """A new id when neither the response nor a counter gives one: derived from the call, unique in the collection."""
    for attempt in range(ID_ATTEMPTS * 4):
        candidate = content_hash(seed, attempt)[:10].upper()
        if candidate not in taken:
            return candidate
    return content_hash(seed, len(taken.first))[:16].upper()


def new_id(state: Mapping[str, Any], world: WorldBinding, resource: ResourceBinding,
           records: dict[str, Any] | list[Any] | None, proposed: Any,
           regenerate: Callable[[str], Any], seed: str) -> Any:
    """The id a create gives its record.

    The toolkit's counter when it has one; for integer ids, one more than the largest in the collection (1 for an
    empty one); otherwise the generated id (`proposed`), drawn again (`regenerate(salt)`) while it is taken; a
    derived one when the response has no id at all. The draws are salted with the collection's size, so the same
    create repeated in one session (same seed) finds a free id at its first draw, not after the draws of every
    repetition before it.
    """
    if resource.counter:
        value, _ = lookup(state, world, resource.counter)
        if _is_int(value):
            return value
    taken = id_index(records, resource.id_field) if records is not None else _EMPTY
    if _is_int(proposed):
        top = taken.top
        return top + 1 if top is not None else 1
    if proposed is None or proposed is ABSENT:
        return fallback_id(seed, taken)
    candidate, attempt = proposed, 0
    while str(candidate) in taken and attempt < ID_ATTEMPTS:
        attempt += 1
        candidate = regenerate(f"{len(taken.first)}.{attempt}")
    return candidate if str(candidate) not in taken else fallback_id(seed, taken)


def _parent_arguments(resource: ResourceBinding) -> set[str]:
    return {argument for argument, _ in resource.parents}


def _kept(resource: ResourceBinding, name: str) -> bool:
    return resource.record_fields is None or name in resource.record_fields


def server_values(resource: ResourceBinding, body: Any) -> dict[str, Any]:
    """The values of the server-owned fields (`readOnly`, required by the record's responses, only the server can
    make) that a response holds: what a create takes from its generated response, and only that. In the response's
    order: a set's order changes with each process's string hashing, and the record kept it."""
    if not isinstance(body, Mapping):
        return {}
    server = resource.server
    return {k: v for k, v in body.items() if k in server.read_only or k in server.required or k in server.made}


def created_record(arguments: Mapping[str, Any], resource: ResourceBinding, record_id: Any,
                   made: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The record a create stores: what was sent (the fields a record has, its parents' ids), its id, and what the
    server makes of the rest: declared defaults and initial values of fields not sent, then `made` (the
    server-owned values of its response, `server_values`). Optional fields nobody sent stay absent."""
    skip = _parent_arguments(resource)
    server = resource.server
    record = {k: v for k, v in {**server.initial, **server.defaults}.items() if k not in arguments}
    record.update({k: v for k, v in arguments.items() if k not in skip and _kept(resource, k)})
    for argument, field_name in resource.parents:
        if argument in arguments:
            record[field_name] = arguments[argument]
    for name, value in (made or {}).items():
        record.setdefault(name, value)
    record[resource.id_field] = record_id
    return record


def _styled(value: str, current: Any) -> str:
    if isinstance(current, str) and current:
        if current.isupper():
            return value.upper()
        if current[0].isupper():
            return value[:1].upper() + value[1:]
    return value


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON Merge Patch: objects merge member by member, `null` removes a member, anything else
    replaces."""
    if not isinstance(patch, Mapping):
        return patch
    out = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _replaced(record: Mapping[str, Any], changes: Mapping[str, Any], accepted: frozenset[str],
              resource: ResourceBinding) -> dict[str, Any]:
    """PUT: the record becomes what was sent plus what the server owns: its id and parents, its `readOnly` fields,
    the fields the operation does not take (the server made them), and the defaults of fields not sent."""
    parents = {field_name for _, field_name in resource.parents}
    kept = {k: v for k, v in record.items()
            if k == resource.id_field or k in resource.server.read_only or k not in accepted or k in parents}
    defaults = {k: v for k, v in resource.server.defaults.items() if k not in changes and k in accepted}
    return {**kept, **defaults, **changes}


def updated_record(record: Mapping[str, Any], arguments: Mapping[str, Any], resource: ResourceBinding,
                   accepted: frozenset[str] | None = None) -> dict[str, Any]:
    """The record after an update, by the binding's mode: `merge` replaces the fields the arguments name (and the
    members of an `updates`-like object argument), `merge_patch` merges them as RFC 7396, `replace` (PUT) makes the
    record what was sent plus its server-owned fields (`accepted`: the operation's argument names, the binding's
    `arguments`; without them the fields merge). A status verb
    sets `status`, in the case style of the current one."""
    skip = _parent_arguments(resource) | {resource.id_argument}
    changes = {k: v for k, v in arguments.items() if k not in skip and k not in UPDATE_BAGS and _kept(resource, k)}
    for bag in UPDATE_BAGS:
        members = arguments.get(bag)
        if isinstance(members, Mapping):
            changes.update({k: v for k, v in members.items() if _kept(resource, k) or k in record})
    if resource.status is not None:
        changes["status"] = _styled(resource.status, record.get("status"))
    if resource.mode == "replace" and accepted is not None:
        return _replaced(record, changes, accepted, resource)
    if resource.mode == "merge_patch":
        merged = merge_patch(record, changes)
        merged[resource.id_field] = record.get(resource.id_field, merged.get(resource.id_field))
        return merged
    return {**record, **changes}

