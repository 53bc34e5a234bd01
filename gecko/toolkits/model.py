"""In-memory form of a toolkit: operations with their argument and response schemas precompiled."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema.protocols import Validator

from gecko.upstream.spec import UpstreamSpec
from utils.schema.fastcheck import FastCheck

Access = Literal["read", "write"]
ParamLocation = Literal["path", "query", "header", "cookie"]
WriteMode = Literal["merge", "replace", "merge_patch"]
BodyMode = Literal["none", "merged", "nested"]
BODY_KEY = "body"
"""Argument name of a request body that is not a JSON object (or clashes with a parameter name)."""


@dataclass(frozen=True)
class Parameter:
    """One OpenAPI parameter (path, query, header or cookie)."""

    name: str
    location: ParamLocation
    required: bool
    schema: dict[str, Any] | bool
    """JSON Schema of the value (`true`/`false` are schemas too)."""
    description: str = ""
    """The parameter's description in the document (query semantics are read from it)."""


@dataclass(frozen=True)
class QueryRoles:
    """What the query arguments of a list operation mean (`gecko.toolkits.queries`): each role is the argument's
    name, or None when the operation has no argument in that role."""

    limit: str | None = None
    """The page size (`limit`, `_limit`, `per_page`, `top`, an integer described as "maximum number of results")."""
    offset: str | None = None
    """How many records to skip (`offset`, `skip`, `_start`)."""
    page: str | None = None
    """The page number, 1-based unless its minimum is 0 (`page`, `_page`)."""
    cursor: str | None = None
    """Where the page starts: the id of the record before it, or an offset as text (`cursor`, `starting_after`)."""
    sort: str | None = None
    """The field to sort by (`sort`, `_sort`, `order_by`); a leading `-` sorts descending."""
    order: str | None = None
    """`asc` or `desc` (`order`, `_order`, `direction`)."""
    search: str | None = None
    """Full-text search (`q`, `query`, `search`)."""
    default_limit: int | None = None
    """The page size when the call gives none: the limit's declared `default` (a page without one)."""
    ignored: tuple[str, ...] = ()
    """Query arguments Gecko cannot interpret (neither a role, a record field nor a range): ignored, and said so."""

    def roles(self) -> dict[str, str]:
        """Role → argument, for the roles this operation has."""
        return {role: name for role in ("limit", "offset", "page", "cursor", "sort", "order", "search")
                if (name := getattr(self, role)) is not None}


@dataclass(frozen=True)
class ServerFields:
    """The fields of a record that the server makes rather than the caller sends (`gecko.toolkits.resources`)."""

    read_only: frozenset[str] = frozenset()
    """`readOnly` properties of the record."""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """Declared `default`s of the record's fields (the request body's first, then the response's)."""
    required: frozenset[str] = frozenset()
    """Fields the responses that return the record require: generated once when not sent, and stored."""
    initial: Mapping[str, Any] = field(default_factory=dict)
    """Values a fresh record starts with where the schema declares none: the initial member of a lifecycle enum
    (`placed`, `pending`), a value the toolkit's state already fixes (its `currency`)."""
    made: frozenset[str] = frozenset()
    """Fields the record's responses show that no create can be sent (`transaction_id`, `created_at`): only the
    server can make them, so a create generates them once and stores them. (A field a create *can* be sent but
    was not, such as an optional `body`, stays absent.)"""

    inputs: frozenset[str] = frozenset()
    """The arguments a create of the resource takes (a field among them that was not sent stays absent)."""

    def names(self) -> frozenset[str]:
        """Every field the server may make."""
        return self.read_only | self.required | frozenset(self.defaults) | frozenset(self.initial) | self.made


@dataclass(frozen=True)
class ResourceBinding:
    """How an operation acts on a collection of records in the session state (`gecko.toolkits.resources`)."""

    name: str
    """The resource noun, singular (`pet`, `ticket`)."""
    action: Literal["create", "read", "list", "update", "delete"]
    collection: str
    """Key of the records under the toolkit's state: `state[toolkit][collection]`."""
    id_field: str
    """The record field holding its id."""
    id_argument: str | None = None
    """The argument carrying the id (read, update, delete)."""
    parents: tuple[tuple[str, str], ...] = ()
    """(argument, record field) of enclosing path parameters (`/owners/{ownerId}/pets` → owner_id)."""
    counter: str | None = None
    """Integer key under the toolkit's state that numbers new records (`ticket_counter`)."""
    status: str | None = None
    """update: the value the record's `status` takes (`cancelled` for `cancel_order`)."""
    list_property: str | None = None
    """list: the array property of an object response (None: the response is the array)."""
    filters: tuple[str, ...] = ()
    """list: arguments that filter or cap the records (record fields, search text, limit)."""
    record_fields: frozenset[str] | None = None
    """Fields a record of this resource has (None: unknown, every argument is kept)."""
    not_found: tuple[int, dict[str, Any] | None, FastCheck | None] | None = None
    """What a missing id gets: (404, body schema, its check) when the operation declares a 404 response,
    (200, None, None) when its success schema has an `{error}` branch; None: no error is declared."""
    declared: bool = False
    """From `x-gecko-resource` rather than inferred."""
    mode: WriteMode = "merge"
    """update: how the arguments change the record: `replace` (PUT: the body plus the server's fields), `merge`
    (field by field), `merge_patch` (RFC 7396, for `application/merge-patch+json`)."""
    server: ServerFields = field(default_factory=ServerFields)
    """The record's server-owned fields (create, update, read: what the server adds to what was sent)."""
    query: QueryRoles | None = None
    """list: what its query arguments mean (page size, offset, page, cursor, sort, order, search)."""
    reason: str = ""
    arguments: frozenset[str] = frozenset()
    """The operation's argument names (a PUT keeps the record's fields it does not take: the server made them)."""
    """Why the operation is bound this way (shown by `GET /toolkits/{name}` and `gecko toolkits explain`)."""


@dataclass(frozen=True)
class WorldBinding:
    """An operation's place in its toolkit's world model."""

    toolkit: str
    """Where the toolkit's part of the state lives: `state[toolkit]`."""
    resource: ResourceBinding | None
    fields: tuple[str, ...] = ()
    """A write without a resource: the toolkit's top-level state fields set from same-named arguments."""
    response_fields: frozenset[str] | None = None
    """Properties the response object declares (where state values are copied); None: not an object with
    declared properties."""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """The toolkit's `x-gecko-default-state` (read-only): collections and fields a session has not written yet."""


@dataclass
class Operation:
    """One tool: an OpenAPI operation with its compiled validators.

    The agent's *arguments* are one JSON object: parameters by name, plus the request body's
    properties when the body is an object (`body_mode == "merged"`), else the body under `body`.
    """

    toolkit: str
    operation_id: str
    method: str
    path: str
    access: Access
    summary: str
    description: str
    original_name: str
    parameters: tuple[Parameter, ...]
    body_mode: BodyMode
    body_required: bool
    args_schema: dict[str, Any]
    response_schema: dict[str, Any] | bool | None
    args_validator: Validator = field(repr=False)
    response_validator: Validator | None = field(repr=False)
    extensions: dict[str, Any] = field(default_factory=dict, repr=False)
    args_check: FastCheck | None = field(default=None, repr=False)
    response_check: FastCheck | None = field(default=None, repr=False)
    not_found_declared: bool = False
    """The operation declares a 404 response."""
    not_found_schema: dict[str, Any] | None = field(default=None, repr=False)
    """The JSON schema of that 404 response's body, if any."""
    success_status: int = 200
    """The status a success answers: 201 for a POST that declares 201, else the lowest declared 2xx (200 when
    the document declares none, e.g. only `default`)."""
    success_has_body: bool = True
    """False when the success response declares no content (204, or a 2xx without `content`): no body is sent."""
    success_headers: tuple[str, ...] = ()
    """Header names the success response declares (`Location` is filled for a create)."""
    merge_patch: bool = False
    """The request body is `application/merge-patch+json` (RFC 7396): a PATCH that is a JSON Merge Patch."""
    world: WorldBinding | None = field(default=None, repr=False)
    """Its place in the world model (set once the whole toolkit is loaded)."""
    alias: str | None = None
    """The name it is called by when its operationId is not one (`issues/create` → `issues_create`; see
    `gecko.toolkits.names`): set once the whole toolkit is loaded."""

    def __post_init__(self) -> None:
        self.args_check = FastCheck(self.args_schema, self.args_validator)
        if self.response_schema is not None and self.response_validator is not None:
            self.response_check = FastCheck(self.response_schema, self.response_validator)

    @functools.cached_property
    def path_regex(self) -> re.Pattern[str]:
        """The document path as a regex (`/pets/{id}` → `^/pets/(?P<p0>[^/]+)/?$`), compiled on first use: most
        calls name the operation, and compiling ten thousand of them at start-up costs seconds."""
        return path_pattern(self.path)

    def response_is_valid(self, body: Any) -> bool:
        """True when `body` fits the response schema (always true without one)."""
        return self.response_check is None or self.response_check.is_valid(body)

    @property
    def call_name(self) -> str:
        """What `POST /{toolkit}/{name}`, tool search and the MCP tool list call it: the operationId, or its alias."""
        return self.alias or self.operation_id

    @property
    def tool_name(self) -> str:
        """Fully qualified name, `toolkit/operationId`."""
        return f"{self.toolkit}/{self.operation_id}"

    def public(self) -> dict[str, Any]:
        """Summary for `GET /toolkits`."""
        return {
            "name": self.operation_id,
            "call_name": self.call_name,
            "original_name": self.original_name,
            "method": self.method.upper(),
            "path": self.path,
            "access": self.access,
            "summary": self.summary,
            "has_response_schema": self.response_schema is not None,
        }


def path_pattern(path: str) -> re.Pattern[str]:
    """`/pets/{id}` → a regex matching the concrete path, one named group per template variable."""
    names = 0
    pattern = ""
    for index, part in enumerate(re.split(r"(\{[^}/]+\})", path)):
        if index % 2:
            pattern += f"(?P<p{names}>[^/]+)"
            names += 1
        else:
            pattern += re.escape(part)
    return re.compile(f"^{pattern}/?$")


@dataclass
class Toolkit:
    """One OpenAPI document."""

    name: str
    title: str
    version: str
    description: str
    source: str
    openapi_version: str
    operations: dict[str, Operation]
    default_state: dict[str, Any] | None = None
    aliases: tuple[str, ...] = ()
    upstream: UpstreamSpec | None = None
    """The real service behind the toolkit (`info.x-gecko-upstream`), used by hybrid and passthrough sessions."""
    labels: dict[str, str] = field(default_factory=dict)
    """`info.x-gecko-pool` (string values): where a pool toolkit comes from, e.g. `{app, source, origin}`."""
