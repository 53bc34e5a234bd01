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
  mode: replace             # update: replace | merge | merge_patch (default: PUT replaces, PATCH merges)
```

A record holds what the caller sent plus what the server makes (`ServerFields`): the id, `readOnly` properties,
declared `default`s, the fields the record's responses require (generated once at the create, stored), and the
initial value of a lifecycle field (`status: placed`, never a terminal `delivered`) or a value the toolkit's state
fixes (its `currency`). Optional fields nobody sent stay absent. `PUT` replaces the record (the body plus those
fields), `PATCH` merges (RFC 7396 for `application/merge-patch+json`).

Read vs write comes from the protocol first: an operation whose access is `read` (GET, MCP `readOnlyHint`,
`x-gecko-access`) is never bound as a create, update or delete; a create-verb name whose only arguments are ids
(`open_task_details(taskId)`) reads. Every binding says why (`reason`).

`x-gecko-resource: false` opts an operation out. A write with no resource sets the toolkit's top-level state fields
that its arguments are named after (`set_budget_limit(budget_limit)`), when the default state declares them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gecko.toolkits.model import Operation, QueryRoles, ResourceBinding, ServerFields, WorldBinding, WriteMode
from gecko.toolkits.names import words
from gecko.toolkits.queries import classify
from utils.schema.fastcheck import FastCheck
from utils.schema.formats import FORMAT_CHECKER
from utils.schema.instance import is_error_branch
from utils.schema.patterns import SafeValidator
from utils.schema.refs import SchemaRefError, pointer_get

log = logging.getLogger("gecko.toolkits")
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
_PARAM = re.compile(r"^\{([^}/]+)\}$")


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
    mode: WriteMode | None = None
    reason: str = ""


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


def object_required(schema: Any, root: Any = None, depth: int = 0) -> set[str]:
    """The properties an object schema requires (through `$ref` and `allOf`; `anyOf`/`oneOf` only when every
    non-error branch requires them)."""
    root = schema if root is None else root
    schema = _defs_get(schema, root)
    if not isinstance(schema, dict) or depth > 8:
        return set()
    found = {str(n) for n in schema.get("required", []) if isinstance(n, str)}
    for part in schema.get("allOf", []):
        found |= object_required(part, root, depth + 1)
    for combiner in ("anyOf", "oneOf"):
        branches = [_defs_get(b, root) for b in schema.get(combiner, [])]
        branches = [b for b in branches if not is_error_branch(b)]
        if branches:
            common = set.intersection(*(object_required(b, root, depth + 1) for b in branches))
            found |= common
    return found


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
    mode = raw.get("mode")
    if mode is not None and mode not in ("merge", "replace", "merge_patch"):
        raise ValueError(f"{op.operation_id}: {EXTENSION}.mode must be merge, replace or merge_patch; got {mode!r}")
    return _Draft(raw["resource"], raw["action"], collection=raw.get("collection"), id_argument=raw.get("id"),
                  id_field=raw.get("id_field"), counter=raw.get("counter"), status=raw.get("status"), declared=True,
                  mode=mode, reason=f"declared by {EXTENSION}")


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
        return _Draft(singular("_".join(words(collection))), action, collection, last.group(1), parents=params[:-1],
                      reason=f"{method.upper()} on the item path {op.path}")
    head_words = words(segments[-1])
    verb = head_words[0] if head_words else ""
    if len(segments) >= 3 and _PARAM.match(segments[-2]) and not _PARAM.match(segments[-3]) and method != "get":
        collection = segments[-3]
        draft = _Draft(singular("_".join(words(collection))), "update", collection, params[-1], parents=params[:-1],
                       reason=f"{method.upper()} on the verb path {op.path}")
        draft.status_verb = verb if verb in STATUS_VERBS else None
        if draft.status_verb or verb in UPDATE_VERBS:
            return draft
        # otherwise a nested collection (`POST /owners/{ownerId}/pets`): below
    if len(segments) == 1 and (verb in CREATE_VERBS | READ_VERBS | LIST_VERBS | UPDATE_VERBS | DELETE_VERBS
                               or verb in STATUS_VERBS or segments[0] == op.operation_id):
        return None  # a function-style path (`/create_note`): the name decides
    if method == "get":
        return _Draft(singular("_".join(head_words)), "list", segments[-1], parents=params,
                      reason=f"GET on the collection path {op.path}")
    if method == "post":
        return _Draft(singular("_".join(head_words)), "create", segments[-1], parents=params,
                      reason=f"POST on the collection path {op.path}")
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
    name = op.original_name or op.operation_id
    why = f"the name {name} (verb '{verb}', noun '{noun}')"
    if verb in CREATE_VERBS:
        if id_argument and all(_id_like(a) for a in _arguments(op)):
            # a create takes what it creates, not only the id of something: `open_task_details(taskId)` reads
            return _Draft(noun, "read", id_argument=id_argument,
                          reason=f"{why}: its only arguments are ids, so it reads")
        return _Draft(noun, "create", reason=why)
    if verb in DELETE_VERBS and id_argument:
        return _Draft(noun, "delete", id_argument=id_argument, reason=why)
    if verb in STATUS_VERBS and id_argument:
        return _Draft(noun, "update", id_argument=id_argument, status_verb=verb, reason=why)
    if verb in UPDATE_VERBS and id_argument:
        return _Draft(noun, "update", id_argument=id_argument, reason=why)
    if verb in READ_VERBS | LIST_VERBS:
        if id_argument and not plural_noun:
            return _Draft(noun, "read", id_argument=id_argument, reason=why)
        if plural_noun or verb in LIST_VERBS:
            return _Draft(noun, "list", reason=why)
    return None


def _access_declared(op: Operation) -> bool:
    nested = op.extensions.get("x-gecko")
    return "x-gecko-access" in op.extensions or (isinstance(nested, Mapping) and "access" in nested)


def _protocol_first(draft: _Draft, op: Operation) -> _Draft | None:
    """A read (by its method or declared access: GET, MCP `readOnlyHint`, `x-gecko-access`) is never bound as a
    write: a write draft becomes a read (it names an id), a list (it returns an array), or nothing."""
    if draft.declared or op.access != "read" or draft.action in ("read", "list"):
        return draft
    protocol = f"{op.method.upper()}" if op.method.lower() in ("get", "head") else "its declared read access"
    if draft.id_argument:
        draft.action, draft.status_verb = "read", None
        draft.reason = f"{draft.reason}; read by {protocol}"
        return draft
    if op.response_schema is not None and array_items(op.response_schema) is not None:
        draft.action, draft.status_verb = "list", None
        draft.reason = f"{draft.reason}; a list by {protocol}"
        return draft
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


LIFECYCLE_FIELDS = frozenset({"status", "state", "stage", "phase", "lifecycle", "lifecycle_state"})
INITIAL_STATES = ("new", "draft", "pending", "placed", "created", "open", "opened", "active", "available",
                  "requested", "submitted", "received", "scheduled", "queued", "todo", "to_do", "not_started",
                  "unpaid", "unread", "planned", "booked", "confirmed", "accepted", "processing", "in_progress",
                  "enabled", "valid", "ok")
"""Members a lifecycle enum starts at, most initial first (a just-placed order is `placed`, not `delivered`)."""
TERMINAL_STATES = frozenset({"cancelled", "canceled", "closed", "delivered", "completed", "complete", "done",
                             "deleted", "archived", "rejected", "failed", "expired", "refunded", "shipped",
                             "resolved", "finished", "inactive", "disabled", "terminated", "removed", "void"})


def _is_lifecycle(name: str) -> bool:
    parts = words(name)
    return bool(parts) and (name.lower() in LIFECYCLE_FIELDS or parts[-1] in ("status", "state"))


def initial_member(enum: list[Any]) -> Any:
    """The member of a lifecycle enum a fresh record starts at: the most initial known one, else the first that is
    not terminal; `None` when there is none (every member is terminal)."""
    by_lower = {str(v).lower().replace(" ", "_").replace("-", "_"): v for v in enum}
    for state in INITIAL_STATES:
        if state in by_lower:
            return by_lower[state]
    return next((v for v in enum if str(v).lower() not in TERMINAL_STATES), None)


def _record_responses(group: list[tuple[_Draft, Operation]]) -> list[Any]:
    """The response schemas that return one record of the resource: the create's and read's, the list's items."""
    out: list[Any] = []
    for draft, op in group:
        if op.response_schema is None or not isinstance(op.response_schema, dict):
            continue
        if draft.action in ("create", "read"):
            out.append((op.response_schema, op.response_schema))
        elif draft.action == "list":
            shape = array_items(op.response_schema)
            if shape is not None:
                out.append((shape[1], op.response_schema))
    return out


def _server_fields(group: list[tuple[_Draft, Operation]], record: Mapping[str, Any] | None,
                   defaults_state: Mapping[str, Any]) -> ServerFields:
    """What the server makes in a record of this resource (beside its id): `readOnly` and defaulted fields of the
    create's arguments and the record's responses, the fields those responses require, the fields they show that
    a create cannot be sent (`made`), and initial values."""
    read_only: set[str] = set()
    defaults: dict[str, Any] = {}
    required: set[str] = set()
    inputs: set[str] = set()
    creates = False
    for draft, op in group:
        if draft.action == "create":
            creates = True
            inputs |= set(_arguments(op)) | set(draft.parents)
            for name, sub in _arguments(op).items():
                resolved = _defs_get(sub, op.args_schema)
                if isinstance(resolved, dict) and "default" in resolved and name not in draft.parents:
                    defaults.setdefault(name, resolved["default"])
    shown: set[str] = set()
    for schema, root in _record_responses(group):
        for name, sub in (object_properties(schema, root) or {}).items():
            shown.add(name)
            resolved = _defs_get(sub, root)
            if not isinstance(resolved, dict):
                continue
            if resolved.get("readOnly") is True:
                read_only.add(name)
            if "default" in resolved:
                defaults.setdefault(name, resolved["default"])
        required |= object_required(schema, root)
    if record:
        required &= set(record)
        shown &= set(record)  # what the create's answer says beside the record (`status: saved`) is no field of it
    initial: dict[str, Any] = {}
    for name, sub in (record or {}).items():
        if name in defaults:
            continue
        fixed = defaults_state.get(name)
        resolved = _defs_get(sub, sub)
        if isinstance(fixed, (str, int, float)) and not isinstance(fixed, bool) and isinstance(resolved, dict) \
                and _value_fits(resolved, fixed):
            initial[name] = fixed
        elif isinstance(resolved, dict) and isinstance(resolved.get("enum"), list) and _is_lifecycle(name):
            member = initial_member(resolved["enum"])
            if member is not None:
                initial[name] = member
    made = frozenset(shown - inputs) if creates else frozenset()
    return ServerFields(frozenset(read_only), defaults, frozenset(required), initial, made, frozenset(inputs))


def _value_fits(schema: Mapping[str, Any], value: Any) -> bool:
    try:
        return bool(SafeValidator(dict(schema), format_checker=FORMAT_CHECKER).is_valid(value))
    except Exception:  # noqa: BLE001 - a schema that cannot be compiled alone (a dangling $ref): not fixed
        return False


def _mode(draft: _Draft, op: Operation) -> WriteMode:
    if draft.mode is not None:
        return draft.mode
    if op.method.lower() == "put" and draft.action == "update" and not draft.status_verb:
        return "replace"
    if op.merge_patch:
        return "merge_patch"
    return "merge"


def _query_roles(op: Operation, filters: tuple[str, ...], parents: Iterable[str], id_argument: str | None) -> QueryRoles:
    """What the list's arguments mean beyond record-field filters (page size, offset, page, cursor, sort…)."""
    described = {p.name: p.description for p in op.parameters}
    understood = {*filters, *parents, *([id_argument] if id_argument else [])}
    return classify(_arguments(op), described, understood)


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
                 and (name in fields or name == collection or (range_field(name) or ("", ""))[1] in fields))


def _scalar_fields(op: Operation, default_state: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(name for name in _arguments(op) if name in default_state
                 and (default_state[name] is None or isinstance(default_state[name], (str, int, float, bool))))


def _drafts(operations: Mapping[str, Operation]) -> tuple[dict[str, _Draft], set[str]]:
    """Pass 1: each operation's binding from its declaration, path or name (protocol first), and the opted out."""
    drafts: dict[str, _Draft] = {}
    opted_out: set[str] = set()
    for op_id, op in operations.items():
        declared = _declared(op)
        if declared is False:
            opted_out.add(op_id)
            continue
        draft = declared or _from_path(op) or _from_name(op)
        draft = _protocol_first(draft, op) if draft is not None else None
        if draft is not None:
            drafts[op_id] = draft
            if draft.action == "read" and draft.reason.endswith("so it reads") and not _access_declared(op):
                op.access = "read"  # the argument shape outranks the verb: hybrid sessions forward it, it writes nothing
    return drafts, opted_out


def _known_nouns(drafts: dict[str, _Draft], defaults: Mapping[str, Any]) -> dict[str, _Draft]:
    """Pass 2: keep the drafts of nouns the toolkit has records of (a create, a read, a collection)."""
    known = {d.noun for d in drafts.values() if d.declared or d.action in ("create", "read")}
    known |= {d.noun for d in drafts.values() if _collection_key(d.noun, defaults) or d.collection}
    for draft in drafts.values():
        tail = draft.noun.rsplit("_", 1)[-1]
        if draft.noun not in known and not draft.declared and tail in known:
            draft.noun = tail  # `get_user_tickets` lists tickets
    return {k: d for k, d in drafts.items() if d.noun in known}


def _share(by_noun: dict[str, list[_Draft]], records: Mapping[str, dict[str, Any]],
           defaults: Mapping[str, Any]) -> None:
    """Pass 3: every operation of a noun agrees on its collection, counter and id field."""
    for noun, group in by_noun.items():
        declared_drafts = [d for d in group if d.declared]
        collection_key = (next((d.collection for d in declared_drafts if d.collection), None)
                          or next((d.collection for d in group if d.collection), None)
                          or _collection_key(noun, defaults) or plural(noun))
        counter = next((d.counter for d in declared_drafts if d.counter), None) or _counter_key(noun, defaults)
        id_field = next((d.id_field for d in declared_drafts if d.id_field), None)
        if id_field is None:
            item = next((d for d in group if d.id_argument), None) or group[0]
            id_field = _id_field(item, records.get(noun))
        for draft in group:
            draft.collection, draft.counter = collection_key, counter
            draft.id_field = draft.id_field or id_field


def _binding(op: Operation, draft: _Draft, record: dict[str, Any] | None, server: ServerFields) -> ResourceBinding:
    """Pass 4: one operation's binding."""
    parents = _parents(draft, record, op.path)
    status = draft.status or (_status_value(draft.status_verb, record, op.response_schema)
                              if draft.status_verb else None)
    listing = array_items(op.response_schema) if draft.action == "list" and op.response_schema else None
    filters = (_filters(op, record, (p for p, _ in parents), str(draft.collection))
               if draft.action == "list" else ())
    query = _query_roles(op, filters, (p for p, _ in parents), draft.id_argument) if draft.action == "list" else None
    if query is not None and query.ignored:
        log.info("%s: list arguments Gecko does not interpret (ignored): %s", op.tool_name, ", ".join(query.ignored))
    return ResourceBinding(
        name=draft.noun, action=draft.action, collection=str(draft.collection), id_field=str(draft.id_field),
        id_argument=draft.id_argument, parents=parents, counter=draft.counter, status=status,
        list_property=listing[0] if listing else None, filters=filters,
        record_fields=frozenset(record) if record else None,
        not_found=_not_found(op) if draft.action in ("read", "update", "delete") else None,
        declared=draft.declared, mode=_mode(draft, op), server=server, query=query, reason=draft.reason,
        arguments=frozenset(_arguments(op)))


def infer_world(toolkit: str, operations: Mapping[str, Operation], default_state: Mapping[str, Any] | None) -> None:
    """Bind every operation of a toolkit to the world model (sets `Operation.world`); called once at load.

    Raises:
        ValueError: A malformed `x-gecko-resource`.
    """
    defaults = dict(default_state or {})
    drafts, opted_out = _drafts(operations)
    drafts = _known_nouns(drafts, defaults)
    records = _record_schemas(drafts, operations)
    by_noun: dict[str, list[_Draft]] = {}
    for draft in drafts.values():
        by_noun.setdefault(draft.noun, []).append(draft)
    _share(by_noun, records, defaults)
    servers = {noun: _server_fields([(d, operations[k]) for k, d in drafts.items() if d.noun == noun],
                                    records.get(noun), defaults) for noun in by_noun}
    for op_id, op in operations.items():
        bound = drafts.get(op_id)
        resource = None if bound is None else _binding(op, bound, records.get(bound.noun), servers[bound.noun])
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
        "not_found": None if r.not_found is None else r.not_found[0], "reason": r.reason or None}
    if r.action == "update":
        out["mode"] = r.mode
    made = r.server.read_only | frozenset(r.server.defaults) | frozenset(r.server.initial)
    if made:
        out["server_fields"] = sorted(made)
    if r.query is not None:
        if r.query.roles():
            out["query"] = r.query.roles()
        if r.query.ignored:
            out["ignored_arguments"] = list(r.query.ignored)
    if r.parents:
        out["parents"] = {argument: field_name for argument, field_name in r.parents}
    return {k: v for k, v in out.items() if v is not None}


__all__ = ["EXTENSION", "bindings_public", "infer_world", "object_properties", "plural", "singular"]
