"""The response of a call from the world model: what the state holds, laid over a schema-valid generated response.

| action | known record | missing id, collection known | unknown collection |
|---|---|---|---|
| read | the record | the declared not-found response | generated, echoing the requested id (open world) |
| list | the selected records, paged and sorted | – | generated |
| create | the arguments, a new id, the server's fields | – | the same (the collection starts) |
| update | the updated record | the declared not-found response | generated |
| delete | the removed record | the declared not-found response | generated |

A response shows what the record holds and nothing else: the record's fields the response declares, plus, only
where the schema requires a field the record lacks, a value generated from the record's own seed (the same for
every read, in every session). Only when that still does not fit the schema is the record laid over a generated
response.

A read without a resource echoes the toolkit's top-level state fields its response is named after. `None` means
"nothing to say": the caller generates the response as without a world model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gecko.pipeline.world.records import (
    created_record,
    new_id,
    overlay,
    server_values,
    updated_record,
)
from gecko.pipeline.world.store import ABSENT, collection, find, lookup, select, toolkit_state, usable
from gecko.toolkits.conventions import convention_of, not_found_message
from gecko.toolkits.model import Operation, ResourceBinding, WorldBinding
from utils.jsonutil import content_hash
from utils.schema.instance import SchemaCache, UnsatisfiableSchema, generate_instance

Generate = Callable[[Mapping[str, Any], str], Any]
"""(echo values, seed) → a response that validates against the operation's schema."""
Member = Callable[[str, str], Any]
"""(field, seed) → a value for one top-level field of the operation's response alone (`LookupError` where it cannot
be made alone): a new id without generating the whole response again."""
COUNT_FIELDS = ("count", "total", "total_count", "totalCount")
"""Integer fields of a list response that say how many items it lists."""
MIN_SHARED_FIELDS = 2
"""A read echoes an object field of the toolkit's state when its response shares at least this many keys with it."""


@dataclass(frozen=True)
class WorldAnswer:
    """A response decided by the world model."""

    body: Any
    status: int = 200
    """The operation's declared success status (200, 201, 204…), or the declared not-found status (404)."""
    notes: tuple[str, ...] = ()
    """What the caller should know about the answer (arguments the world model did not interpret)."""


def _scalars(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if not isinstance(v, (dict, list))}


def record_seed(world: WorldBinding, resource: ResourceBinding | None, record: Mapping[str, Any]) -> str:
    """The seed of values generated for a record that lacks a field its response requires: the record's own
    identity, so every read of it, in every session, shows the same value."""
    record_id = record.get(resource.id_field) if resource is not None else None
    where = resource.collection if resource is not None else ""
    return content_hash("record", world.toolkit, where, record_id if record_id is not None else record)


def faithful(record: Mapping[str, Any], allowed: frozenset[str] | None, base: Callable[[], Any],
             check: Callable[[Any], bool], about: frozenset[str] = frozenset()) -> Any:
    """A response that shows the record: its fields the response declares (all of them when it declares none), and
    the generated values (`base()`, built only when needed) of `about`: what the response says beside the record
    (`cancel_status`, `message`); where that does not fit the schema, the fields the generated response has and
    the record lacks are added, then each is dropped again wherever the schema holds without it; only when even
    that does not fit, the record laid over the generated response."""
    shown = {k: v for k, v in record.items() if allowed is None or k in allowed}
    generated: Any = None
    if about:
        generated = base()
        if isinstance(generated, dict):
            shown.update({k: v for k, v in generated.items() if k in about and k not in shown})
    if check(shown):
        return shown
    generated = base() if generated is None else generated
    if not isinstance(generated, dict):
        return generated
    filled = {**shown, **{k: v for k, v in generated.items() if k not in shown}}
    if not check(filled):
        return overlay(generated, record, allowed, check)
    for key in [k for k in generated if k not in shown]:  # drop what the schema does not need
        trial = {k: v for k, v in filled.items() if k != key}
        if check(trial):
            filled = trial
    return filled


def _record_answer(op: Operation, world: WorldBinding, record: Any, arguments: Mapping[str, Any], seed: str,
                   generate: Generate, resource: ResourceBinding | None = None) -> WorldAnswer:
    values = record if isinstance(record, Mapping) else {}
    own_seed = record_seed(world, resource, values) if values else seed
    about = _about(world, resource, values)
    body = faithful(values, world.response_fields,
                    lambda: generate({**arguments, **_scalars(values)}, seed if about else own_seed),
                    op.response_is_valid, about)
    return WorldAnswer(body, op.success_status)


def _about(world: WorldBinding, resource: ResourceBinding | None,
           record: Mapping[str, Any] | None = None) -> frozenset[str]:
    """The fields a response declares that are not fields of the record (`cancel_status`, `message`): not record
    fields at all, or, for a write, fields the record lacks that no create of it could have been sent."""
    if resource is None or world.response_fields is None:
        return frozenset()
    about = world.response_fields - (resource.record_fields or frozenset())
    if resource.action in ("update", "delete") and record is not None:
        about |= world.response_fields - record.keys() - resource.server.inputs
    return about


def _not_found_message(op: Operation, resource: ResourceBinding, record_id: Any) -> str:
    """The tool's own not-found message: its error convention's template (`Task not found: {id}`) when it has one."""
    return (not_found_message(convention_of(op), record_id)
            or f"{resource.name.replace('_', ' ').capitalize()} {record_id} not found.")


def not_found(op: Operation, resource: ResourceBinding, record_id: Any, seed: str,
              cache: SchemaCache | None = None) -> WorldAnswer | None:
    """The operation's declared not-found response for `record_id` (None when it declares none); `cache`: the
    generator's, kept across calls (see `SchemaCache`)."""
    if resource.not_found is None:
        return None
    status, schema, check = resource.not_found
    message = _not_found_message(op, resource, record_id)
    if status == 200:
        body = {"error": message}
        return WorldAnswer(body) if op.response_is_valid(body) else None
    if schema is None or check is None:
        return WorldAnswer({"error": message}, status)
    hints = {"error": message, "message": message, "detail": message, "title": "Not Found", "status": status,
             "code": status}
    try:
        return WorldAnswer(generate_instance(schema, seed, hints, check=check.is_valid, cache=cache), status)
    except UnsatisfiableSchema:
        return WorldAnswer({"error": message}, status)


def _list_answer(op: Operation, world: WorldBinding, resource: ResourceBinding, records: Any,
                 arguments: Mapping[str, Any], seed: str, generate: Generate) -> WorldAnswer | None:
    chosen = select(records, resource, arguments)
    base = generate(arguments, seed)
    holder = base if resource.list_property is None else (
        base.get(resource.list_property) if isinstance(base, dict) else None)
    if not isinstance(holder, list):
        if isinstance(base, (str, int)) and not isinstance(base, bool) and chosen:
            # a lookup that answers with one id (`find_user_id_by_email`)
            first = chosen[0][0]
            return WorldAnswer(first, op.success_status) if op.response_is_valid(first) else None
        return None

    def body_with(items: list[Any]) -> Any:
        if resource.list_property is None:
            return items
        counted = {name: len(items) for name in COUNT_FIELDS if isinstance(base.get(name), int)
                   and not isinstance(base.get(name), bool)}
        return {**base, **counted, resource.list_property: items}

    template = holder[0] if holder else None
    items: list[Any] = []
    for record_id, record in chosen:
        if isinstance(template, dict) and isinstance(record, Mapping):
            def fits(item: Any) -> bool:
                return op.response_is_valid(body_with([item]))
            items.append(faithful(record, None, _generated_item(generate, arguments, resource,
                                                                 record_seed(world, resource, record)), fits))
        elif isinstance(template, dict) or template is None:
            items.append(record)
        else:
            items.append(record if type(record) is type(template) else record_id)
    for candidate in (items, items[: len(holder)]):
        body = body_with(candidate)
        if op.response_is_valid(body):
            return WorldAnswer(body, op.success_status)
    return None


def _generated_item(generate: Generate, arguments: Mapping[str, Any], resource: ResourceBinding,
                    seed: str) -> Callable[[], Any]:
    """A generated list item for one record (built only when asked for), from the record's own seed."""
    def build() -> Any:
        return _item(generate(arguments, seed), resource)
    return build


def _item(body: Any, resource: ResourceBinding) -> Any:
    """The first item of a generated list response (an empty object when it has none)."""
    holder = body if resource.list_property is None else (
        body.get(resource.list_property) if isinstance(body, dict) else None)
    return holder[0] if isinstance(holder, list) and holder else {}


def _echo_state(op: Operation, world: WorldBinding, state: Mapping[str, Any], arguments: Mapping[str, Any],
                seed: str, generate: Generate) -> WorldAnswer | None:
    fields = world.response_fields
    if not fields:
        return None
    values: dict[str, Any] = {}
    for name in fields:
        value, _ = lookup(state, world, name)
        if value is not ABSENT and not isinstance(value, (dict, list)):
            values[name] = value
    best: Mapping[str, Any] = {}
    for key in {*toolkit_state(state, world), *world.defaults}:
        value, _ = lookup(state, world, key)
        if isinstance(value, Mapping) and len(fields & value.keys()) > max(len(best.keys() & fields),
                                                                             MIN_SHARED_FIELDS - 1):
            best = value
    values.update({k: v for k, v in best.items() if k in fields and k not in values})
    if not values:
        return None
    return _record_answer(op, world, values, arguments, seed, generate)


def respond(op: Operation, arguments: Mapping[str, Any], state: Mapping[str, Any], seed: str,
            generate: Generate, member: Member | None = None, cache: SchemaCache | None = None) -> WorldAnswer | None:
    """The response the world model gives this call, or None to generate one as usual.

    Args:
        op: the operation (its `world` binding decides).
        arguments: the call's (valid) arguments.
        state: the session state before the call.
        seed: the call's seed (the same one the state side derives ids from).
        generate: the schema-driven generator of the operation's response.
        member: the generator of one field of it (a create's id drawn again when taken); None: `generate`'s.
        cache: the generator's cache for the responses it makes itself (a declared not-found response).
    """
    world = op.world
    if world is None or not usable(state, world):
        return None
    resource = world.resource
    if resource is None:
        return _echo_state(op, world, state, arguments, seed, generate) if op.access == "read" else None
    records = collection(state, world, resource).records
    if resource.action == "list":
        answer = None if records is None else _list_answer(op, world, resource, records, arguments, seed, generate)
        ignored = [a for a in (resource.query.ignored if resource.query else ()) if a in arguments]
        if answer is not None and ignored:
            note = (f"{op.tool_name}: Gecko does not interpret the argument(s) {', '.join(ignored)} of this list "
                    "(neither a record field, a range, a page size, offset, page, cursor, sort, order nor a search): "
                    "ignored")
            return dataclasses.replace(answer, notes=(note,))
        return answer
    if resource.action == "create":
        base = generate(arguments, seed)
        proposed = base.get(resource.id_field, ABSENT) if isinstance(base, dict) else ABSENT
        record_id = new_id(state, world, resource, records, proposed,
                           lambda salt: _regenerated(generate, member, arguments, seed, salt, resource.id_field),
                           seed)
        record = created_record(arguments, resource, record_id, server_values(resource, base))
        return WorldAnswer(faithful(record, world.response_fields, lambda: base, op.response_is_valid,
                                    _about(world, resource)), op.success_status)
    record_id = arguments.get(resource.id_argument) if resource.id_argument else None
    if record_id is None:
        return None
    found = find(records, resource.id_field, record_id) if records is not None else None
    if found is None:
        if records is None:  # open world: a generated record, but the one that was asked for
            if resource.action != "read" or op.response_schema is None:
                return None
            body = overlay(generate(arguments, seed), {resource.id_field: record_id}, world.response_fields,
                           op.response_is_valid)
            return WorldAnswer(body, op.success_status)
        return not_found(op, resource, record_id, seed, cache)
    record = found[1]
    if resource.action == "delete" and (op.response_schema is None or not op.success_has_body):
        return None  # a body-less delete answers as usual
    if resource.action == "update" and isinstance(record, Mapping):
        record = updated_record(record, arguments, resource, resource.arguments)
    return _record_answer(op, world, record, arguments, seed, generate, resource)


def _regenerated(generate: Generate, member: Member | None, arguments: Mapping[str, Any], seed: str, salt: str,
                 id_field: str) -> Any:
    if member is not None:
        try:
            return member(id_field, f"{seed}#id{salt}")
        except (LookupError, UnsatisfiableSchema):
            pass  # not a field of a plain object: the whole response again
    body = generate(arguments, f"{seed}#id{salt}")
    return body.get(id_field) if isinstance(body, dict) else None
