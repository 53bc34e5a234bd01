"""The world model of a toolkit, inferred once at load time from the API's shape alone.

Each operation may be bound to a *resource* (a collection of records in the session state) and an *action* on it:

| shape | example | action |
|---|---|---|
| `POST /pets`, `GET /pets` | a collection path | create, list |
| `GET/PUT/PATCH/DELETE /pets/{petId}` | an item path | read, update, delete |
| `POST /orders/{id}/cancel` | a verb after an item path | update (status `cancelled`) |
| `/owners/{ownerId}/pets…` | a nested path | the same, records carry the owner |
| `create_X`, `add_X`, `book_X`, `place_X` … | a function name (verb + noun) | create |
| `get_X(X_id)`, `list_Xs`, `search_Xs` | | read (with an id argument), list |
| `update_X(X_id, …)`, `cancel_X(X_id)` … | | update (cancel/close/resolve… also set `status`) |
| `delete_X(X_id)`, `remove_X(X_id)` | | delete |

Records live at `state[<toolkit>][<collection>]`, an object keyed by id (or a list of records, when the toolkit's
default state holds one there). The collection key is the path segment (`pets`), else a key of the toolkit's
`x-gecko-default-state` named after the noun (`tweets`, `ticket_queue`, `credit_card_list`), else the noun's plural.
The record's id field is the id argument's name if the record has such a field, else `id`, else `<noun>_id`. An
integer `<noun>_counter` (or `next_<noun>_id`) in the default state numbers new records.

Where inference is ambiguous, an operation declares its binding (every key optional but `resource`):

```yaml
x-gecko-resource:
  resource: ticket          # the noun (singular)
  action: update            # create | read | list | update | delete
  collection: ticket_queue  # the state key under the toolkit
  id: ticket_id             # the argument carrying the record's id
  id_field: id              # the record's id field
  counter: ticket_counter   # integer state key that numbers new records
  status: closed            # update: the record's `status` becomes this
```

`x-gecko-resource: false` opts an operation out. A write with no resource sets the toolkit's top-level state fields
that its arguments are named after (`set_budget_limit(budget_limit)`), when the default state declares them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gecko.toolkits.model import Operation, ResourceBinding, WorldBinding
from utils.schema.fastcheck import FastCheck
from utils.schema.formats import FORMAT_CHECKER
from utils.schema.instance import is_error_branch
from utils.schema.patterns import SafeValidator
from utils.schema.refs import SchemaRefError, pointer_get

Action = Literal["create", "read", "list", "update", "delete"]
ACTIONS: tuple[Action, ...] = ("create", "read", "list", "update", "delete")
EXTENSION = "x-gecko-resource"

CREATE_VERBS = frozenset({"create", "add", "new", "post", "book", "place", "register", "insert", "make", "open",
                          "submit", "schedule", "upload", "issue", "publish", "enroll", "reserve", "generate"})
READ_VERBS = frozenset({"get", "fetch", "read", "show", "view", "retrieve", "describe", "lookup", "load", "display"})
LIST_VERBS = frozenset({"list", "search", "browse", "query", "find", "filter", "all"})
UPDATE_VERBS = frozenset({"update", "edit", "modify", "change", "set", "patch", "rename", "replace", "put", "mark",
                          "assign", "move", "adjust"})
DELETE_VERBS = frozenset({"delete", "remove", "destroy", "drop", "erase", "purge", "discard", "unregister", "revoke"})
STATUS_VERBS: dict[str, tuple[str, ...]] = {
    "cancel": ("cancelled", "canceled"), "close": ("closed",), "resolve": ("resolved",), "complete": ("completed",),
    "archive": ("archived",), "approve": ("approved",), "reject": ("rejected",), "activate": ("active", "activated"),
    "deactivate": ("inactive", "deactivated"), "reopen": ("open", "reopened"), "suspend": ("suspended",),
    "confirm": ("confirmed",), "ship": ("shipped",), "deliver": ("delivered",), "refund": ("refunded",),
    "pause": ("paused",), "resume": ("active", "resumed"), "publish": ("published",), "lock": ("locked",),
    "unlock": ("unlocked",), "block": ("blocked",), "unblock": ("active", "unblocked"),
}
"""Verbs that move a record to a status: the first value is used unless the schema's enum names another."""
PREPOSITIONS = frozenset({"to", "from", "into", "onto", "in", "on", "for", "with", "by", "of", "at"})
"""`add_to_watchlist`, `remove_stock_from_cart`: a verb followed by a preposition acts on a container, not on a
record of its own: such names are not bound."""
FILLER_WORDS = frozenset({"details", "detail", "info", "information", "data", "record", "by", "id", "ids", "all",
                          "to", "from", "for", "in", "on", "of", "with", "a", "an", "the", "new", "my", "list"})
SEARCH_ARGUMENTS = frozenset({"q", "query", "keyword", "keywords", "search", "term", "text"})
LIMIT_ARGUMENTS = frozenset({"limit", "max_results", "maxresults", "page_size", "pagesize", "per_page", "perpage",
                             "top", "size", "n"})
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PARAM = re.compile(r"^\{([^}/]+)\}$")


def words(name: str) -> list[str]:
    """Lower-case words of a name (`getPetById` → get, pet, by, id; `ticket_queue` → ticket, queue)."""
    return [w.lower() for w in _WORDS.findall(name.rsplit(".", 1)[-1].replace("-", "_"))]


def singular(word: str) -> str:
    """`tickets` → `ticket`, `categories` → `category`, `addresses` → `address` (English, regular forms)."""
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if len(word) > 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def plural(word: str) -> str:
    """`ticket` → `tickets`, `category` → `categories`, `address` → `addresses`."""
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


@dataclass
class _Draft:
    """A binding under construction (one per operation)."""

    noun: str
    action: Action
    collection: str | None = None
    id_argument: str | None = None
    id_field: str | None = None
    parents: list[str] = field(default_factory=list)
    counter: str | None = None
    status_verb: str | None = None
    status: str | None = None
    declared: bool = False


def _defs_get(schema: Any, root: Any) -> Any:
    hops = 0
    while isinstance(schema, dict) and "$ref" in schema and hops < 32:
        try:
            schema = pointer_get(root, schema["$ref"])
        except SchemaRefError:
            return {}
        hops += 1
    return schema


def object_properties(schema: Any, root: Any = None, depth: int = 0) -> dict[str, Any] | None:
    """The properties an object schema declares (through `$ref`, `allOf` and the non-error branches of
    `anyOf`/`oneOf`), or None when the schema does not describe an object with properties."""
    root = schema if root is None else root
    schema = _defs_get(schema, root)
    if not isinstance(schema, dict) or depth > 8:
        return None
    found: dict[str, Any] = {}
    props = schema.get("properties")
    if isinstance(props, dict):
        found.update(props)
    for part in schema.get("allOf", []):
        found.update(object_properties(part, root, depth + 1) or {})
    for combiner in ("anyOf", "oneOf"):
        for branch in schema.get(combiner, []):
            resolved = _defs_get(branch, root)
            if not is_error_branch(resolved):
                found.update(object_properties(resolved, root, depth + 1) or {})
    return found or None


def array_items(schema: Any, root: Any = None) -> tuple[str | None, Any] | None:
    """Where a list response keeps its items: `(None, item schema)` for an array, `(property, item schema)` for an
    object with exactly one array property; None otherwise."""
    root = schema if root is None else root
    resolved = _defs_get(schema, root)
    if isinstance(resolved, dict):
        for combiner in ("anyOf", "oneOf"):
            branches = [b for b in resolved.get(combiner, []) if not is_error_branch(_defs_get(b, root))]
            if len(branches) == 1:
                return array_items(branches[0], root)
        if resolved.get("type") == "array" or "items" in resolved:
            return None, resolved.get("items", {})
    props = object_properties(resolved, root) or {}
    arrays = [(name, _defs_get(sub, root)) for name, sub in props.items()
              if isinstance(_defs_get(sub, root), dict) and _defs_get(sub, root).get("type") == "array"]
    if len(arrays) == 1:
        return arrays[0][0], arrays[0][1].get("items", {})
    return None


def has_error_branch(schema: Any) -> bool:
    """Whether a success schema has an `{error}` branch (a tool that reports failures in its 200 body)."""
    resolved = _defs_get(schema, schema)
    if not isinstance(resolved, dict):
        return False
    return any(is_error_branch(_defs_get(b, schema)) for c in ("anyOf", "oneOf") for b in resolved.get(c, []))


def _id_like(name: str) -> bool:
    return name == "id" or name.endswith(("_id", "Id", "ID"))


def _noun_of_id(name: str) -> str | None:
    parts = words(name)
    if len(parts) >= 2 and parts[-1] in ("id", "ids"):
        return "_".join(parts[:-1])
    return None


def _arguments(op: Operation) -> dict[str, Any]:
    props = op.args_schema.get("properties") if isinstance(op.args_schema, dict) else None
    return props if isinstance(props, dict) else {}


def _declared(op: Operation) -> _Draft | None | Literal[False]:
    raw = op.extensions.get(EXTENSION)
    if raw is None:
        return None
    if raw is False:
        return False
    if not isinstance(raw, Mapping) or not isinstance(raw.get("resource"), str) or raw.get("action") not in ACTIONS:
        raise ValueError(f"{op.operation_id}: {EXTENSION} must be false or an object with 'resource' and 'action' "
                         f"({', '.join(ACTIONS)}); got {raw!r}")
    return _Draft(raw["resource"], raw["action"], collection=raw.get("collection"), id_argument=raw.get("id"),
                  id_field=raw.get("id_field"), counter=raw.get("counter"), status=raw.get("status"), declared=True)


def _from_path(op: Operation) -> _Draft | None:
    segments = [s for s in op.path.split("/") if s]
    if not segments:
        return None
    method = op.method.lower()
    last = _PARAM.match(segments[-1])
    params = [m.group(1) for s in segments if (m := _PARAM.match(s))]
    if last is not None:
        if len(segments) < 2 or _PARAM.match(segments[-2]):
            return None
        collection = segments[-2]
        actions: dict[str, Action] = {"get": "read", "put": "update", "patch": "update", "delete": "delete",
                                      "post": "update"}
        action = actions.get(method)
        if action is None:
            return None
        return _Draft(singular("_".join(words(collection))), action, collection, last.group(1), parents=params[:-1])
    head_words = words(segments[-1])
    verb = head_words[0] if head_words else ""
    if len(segments) >= 3 and _PARAM.match(segments[-2]) and not _PARAM.match(segments[-3]) and method != "get":
        collection = segments[-3]
        draft = _Draft(singular("_".join(words(collection))), "update", collection, params[-1], parents=params[:-1])
        draft.status_verb = verb if verb in STATUS_VERBS else None
        if draft.status_verb or verb in UPDATE_VERBS:
            return draft
        # otherwise a nested collection (`POST /owners/{ownerId}/pets`): below
    if len(segments) == 1 and (verb in CREATE_VERBS | READ_VERBS | LIST_VERBS | UPDATE_VERBS | DELETE_VERBS
                               or verb in STATUS_VERBS or segments[0] == op.operation_id):
        return None  # a function-style path (`/create_note`): the name decides
    if method == "get":
        return _Draft(singular("_".join(head_words)), "list", segments[-1], parents=params)
    if method == "post":
        return _Draft(singular("_".join(head_words)), "create", segments[-1], parents=params)
    return None


def _from_name(op: Operation) -> _Draft | None:
    parts = words(op.original_name or op.operation_id)
    if len(parts) < 1:
        return None
    verb, rest = parts[0], parts[1:]
    if rest and rest[0] in PREPOSITIONS:
        return None
    if "by" in rest:
        rest = rest[: rest.index("by")]
    nouns = [w for w in rest if w not in FILLER_WORDS]
    id_args = [name for name in _arguments(op) if _id_like(name)]
    noun = "_".join(singular(w) if i == len(nouns) - 1 else w for i, w in enumerate(nouns))
    matching = [a for a in id_args if _noun_of_id(a) == noun or a == "id"] if noun else []
    if not matching and len(id_args) == 1 and verb not in CREATE_VERBS:
        id_noun = _noun_of_id(id_args[0])
        if id_noun and (not noun or noun.endswith(id_noun) or id_noun.endswith(noun)):
            noun, matching = id_noun, id_args
    if not noun:
        return None
    id_argument = matching[0] if matching else None
    plural_noun = bool(nouns) and nouns[-1] != singular(nouns[-1])
    if verb in CREATE_VERBS:
        return _Draft(noun, "create")
    if verb in DELETE_VERBS and id_argument:
        return _Draft(noun, "delete", id_argument=id_argument)
    if verb in STATUS_VERBS and id_argument:
        return _Draft(noun, "update", id_argument=id_argument, status_verb=verb)
    if verb in UPDATE_VERBS and id_argument:
        return _Draft(noun, "update", id_argument=id_argument)
    if verb in READ_VERBS | LIST_VERBS:
        if id_argument and not plural_noun:
            return _Draft(noun, "read", id_argument=id_argument)
        if plural_noun or verb in LIST_VERBS:
            return _Draft(noun, "list")
    return None


def _collection_key(noun: str, default_state: Mapping[str, Any]) -> str | None:
    """A default-state key holding the noun's records (`tweets`, `ticket_queue`), if any."""
    noun_words = noun.split("_")
    candidates = []
    for key, value in default_state.items():
        if not isinstance(value, (dict, list)):
            continue
        key_words = words(key)
        head = key_words[: len(noun_words)]
        if key_words == noun_words[:-1] + [plural(noun_words[-1])] or key_words == noun_words:
            candidates.append((0, key))
        elif len(head) == len(noun_words) and head[:-1] == noun_words[:-1] and singular(head[-1]) == noun_words[-1]:
            candidates.append((1, key))
    return min(candidates)[1] if candidates else None


def _counter_key(noun: str, default_state: Mapping[str, Any]) -> str | None:
    for key in (f"{noun}_counter", f"next_{noun}_id", f"{noun}Counter", f"next{noun.title().replace('_', '')}Id"):
        value = default_state.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return key
    return None


def _status_value(verb: str, record_schema: Mapping[str, Any] | None, root: Any) -> str:
    options = STATUS_VERBS[verb]
    status = _defs_get((record_schema or {}).get("status"), root)
    enum = status.get("enum") if isinstance(status, dict) else None
    if isinstance(enum, list):
        by_lower = {str(v).lower(): v for v in enum if isinstance(v, str)}
        for option in options:
            if option in by_lower:
                return str(by_lower[option])
    return options[0]


def _id_field(draft: _Draft, record: Mapping[str, Any] | None) -> str:
    fields = record or {}
    for candidate in (draft.id_argument, "id", f"{draft.noun}_id", f"{draft.noun}Id"):
        if candidate and candidate in fields:
            return candidate
    if draft.id_argument and not _PARAM.match(draft.id_argument) and not record:
        return draft.id_argument
    return "id"


def _not_found(op: Operation) -> tuple[int, Any, FastCheck | None] | None:
    if op.not_found_declared:
        schema = op.not_found_schema
        check = None if schema is None else FastCheck(schema, SafeValidator(schema, format_checker=FORMAT_CHECKER))
        return 404, schema, check
    if op.response_schema is not None and has_error_branch(op.response_schema):
        return 200, None, None
    return None


def _record_schemas(drafts: Mapping[str, _Draft], operations: Mapping[str, Operation]) -> dict[str, dict[str, Any]]:
    """Per noun: the properties of its record: the read's response; without a read, the create's response or update's
    response together with the create's arguments (what was created is what a record holds)."""
    ranked: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    created: dict[str, dict[str, Any]] = {}
    for op_id, draft in drafts.items():
        op = operations[op_id]
        if draft.action == "create":
            created.setdefault(draft.noun, {}).update(
                {k: v for k, v in _arguments(op).items() if k not in draft.parents})
        if draft.action in ("read", "update", "create") and op.response_schema is not None:
            props = object_properties(op.response_schema)
            if props:
                ranked.setdefault(draft.noun, []).append(({"read": 0, "create": 1, "update": 2}[draft.action], props))
    out: dict[str, dict[str, Any]] = {}
    for noun in ranked.keys() | created.keys():
        rank, props = min(ranked.get(noun, [(3, {})]), key=lambda o: o[0])
        out[noun] = props if rank == 0 else {**created.get(noun, {}), **props}
    return {noun: props for noun, props in out.items() if props}


def _parents(draft: _Draft, record: Mapping[str, Any] | None, path: str) -> tuple[tuple[str, str], ...]:
    out = []
    segments = [s for s in path.split("/") if s]
    for param in draft.parents:
        index = segments.index(f"{{{param}}}") if f"{{{param}}}" in segments else 0
        owner = singular("_".join(words(segments[index - 1]))) if index > 0 else param
        fields = record or {}
        field_name = next((c for c in (param, f"{owner}_id", f"{owner}Id") if c in fields), f"{owner}_id")
        out.append((param, field_name))
    return tuple(out)


def range_field(argument: str) -> tuple[str, str] | None:
    """`min_price` / `price_min` → ("min", "price"); `max_price` / `price_max` → ("max", "price"); else None."""
    lower = argument.lower()
    for bound in ("min", "max"):
        if lower.startswith(bound + "_"):
            return bound, argument[len(bound) + 1:]
        if lower.endswith("_" + bound):
            return bound, argument[: -len(bound) - 1]
    return None


def _filters(op: Operation, record: Mapping[str, Any] | None, parents: Iterable[str],
             collection: str) -> tuple[str, ...]:
    skip = set(parents)
    fields = record or {}
    return tuple(name for name in _arguments(op) if name not in skip
                 and (name in fields or name == collection or name.lower() in SEARCH_ARGUMENTS
                      or name.lower() in LIMIT_ARGUMENTS or (range_field(name) or ("", ""))[1] in fields))


def _scalar_fields(op: Operation, default_state: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(name for name in _arguments(op) if name in default_state
                 and (default_state[name] is None or isinstance(default_state[name], (str, int, float, bool))))


def infer_world(toolkit: str, operations: Mapping[str, Operation], default_state: Mapping[str, Any] | None) -> None:
    """Bind every operation of a toolkit to the world model (sets `Operation.world`); called once at load.

    Raises:
        ValueError: A malformed `x-gecko-resource`.
    """
    defaults = dict(default_state or {})
    drafts: dict[str, _Draft] = {}
    opted_out: set[str] = set()
    for op_id, op in operations.items():
        declared = _declared(op)
        if declared is False:
            opted_out.add(op_id)
            continue
        draft = declared or _from_path(op) or _from_name(op)
        if draft is not None:
            drafts[op_id] = draft
    known = {d.noun for d in drafts.values() if d.declared or d.action in ("create", "read")}
    known |= {d.noun for d in drafts.values() if _collection_key(d.noun, defaults) or d.collection}
    for draft in drafts.values():
        tail = draft.noun.rsplit("_", 1)[-1]
        if draft.noun not in known and not draft.declared and tail in known:
            draft.noun = tail  # `get_user_tickets` lists tickets
    drafts = {k: d for k, d in drafts.items() if d.noun in known}
    records = _record_schemas(drafts, operations)
    by_noun: dict[str, list[_Draft]] = {}
    for draft in drafts.values():
        by_noun.setdefault(draft.noun, []).append(draft)
    for noun, group in by_noun.items():
        declared_drafts = [d for d in group if d.declared]
        shared = {
            "collection": next((d.collection for d in declared_drafts if d.collection), None)
            or next((d.collection for d in group if d.collection), None)
            or _collection_key(noun, defaults) or plural(noun),
            "counter": next((d.counter for d in declared_drafts if d.counter), None) or _counter_key(noun, defaults),
            "id_field": next((d.id_field for d in declared_drafts if d.id_field), None),
        }
        if shared["id_field"] is None:
            item = next((d for d in group if d.id_argument), None) or group[0]
            shared["id_field"] = _id_field(item, records.get(noun))
        for draft in group:
            draft.collection, draft.counter = shared["collection"], shared["counter"]
            draft.id_field = draft.id_field or shared["id_field"]
    for op_id, op in operations.items():
        draft = drafts.get(op_id)
        resource = None
        if draft is not None:
            record = records.get(draft.noun)
            parents = _parents(draft, record, op.path)
            status = draft.status or (_status_value(draft.status_verb, record, op.response_schema)
                                      if draft.status_verb else None)
            listing = array_items(op.response_schema) if draft.action == "list" and op.response_schema else None
            resource = ResourceBinding(
                name=draft.noun, action=draft.action, collection=str(draft.collection), id_field=str(draft.id_field),
                id_argument=draft.id_argument, parents=parents, counter=draft.counter, status=status,
                list_property=listing[0] if listing else None,
                filters=(_filters(op, record, (p for p, _ in parents), str(draft.collection))
                         if draft.action == "list" else ()),
                record_fields=frozenset(record) if record else None,
                not_found=_not_found(op) if draft.action in ("read", "update", "delete") else None,
                declared=draft.declared)
        fields = () if op_id in opted_out or resource is not None or op.access != "write" else _scalar_fields(op, defaults)
        declared_props = object_properties(op.response_schema) if op.response_schema is not None else None
        op.world = WorldBinding(toolkit, resource, fields, frozenset(declared_props) if declared_props else None,
                                defaults)


def bindings_public(op: Operation) -> dict[str, Any] | None:
    """The operation's binding for `GET /toolkits/{name}` (None: the world model does not place it)."""
    world = op.world
    if world is None or (world.resource is None and not world.fields):
        return None
    if world.resource is None:
        return {"sets_fields": list(world.fields)}
    r = world.resource
    out: dict[str, Any] = {
        "resource": r.name, "action": r.action, "collection": r.collection, "id_field": r.id_field,
        "id": r.id_argument, "counter": r.counter, "status": r.status, "declared": r.declared,
        "not_found": None if r.not_found is None else r.not_found[0]}
    if r.parents:
        out["parents"] = {argument: field_name for argument, field_name in r.parents}
    return {k: v for k, v in out.items() if v is not None}


__all__ = ["EXTENSION", "bindings_public", "infer_world", "object_properties", "plural", "singular"]
