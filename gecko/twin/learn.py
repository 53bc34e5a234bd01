"""Learn a twin's contract from captured real calls: result schemas, error conventions, ids, read/write.

`learn_toolkit(doc, captures)` returns a copy of a converted toolkit (`gecko convert mcp`) with, per tool the
captures cover (matched by `x-gecko-original-name`):

| what | from | written as |
|---|---|---|
| result schema | the successful results (genson), only where the server declares no `outputSchema` | the 200 schema, `x-gecko-response-origin: learned`; with in-band errors `anyOf: [success, {error}]` |
| error convention | the application errors: `isError` with a message, or an error body (`{"error": …}`, `{"status": "error", "message": …}`) | `x-gecko-error-convention`; an `isError` tool taking ids also declares a `404` (the world model's not-found) |
| not-found message | an error text that contains an argument's value (`Task not found: {id}`) | `x-gecko-error-convention.not_found`, `.id_argument` |
| ids | a result value never seen before that a later call sends back (or a fresh value of an id-named field in most results) is a new id; an argument whose values were issued so is an id argument | `x-gecko-ids: {issues: [...], arguments: {arg: "tool.field"}}` |
| creates and reads | a tool issuing new ids at a top-level field is a create; a tool whose required arguments are only ids, that issues none and whose results repeat the id it was given is a read | `x-gecko-resource` (action, noun, id argument, id field) and, where the server states no annotation, `x-gecko-access` |

Every learned operation carries `x-gecko-learned` (`from: capture`, the number of calls and outcomes); the document
`info.x-gecko-learned`. What the server declares (its `outputSchema`, its annotations) is kept: evidence fills what
the source leaves open, a model (`inferrer`) only what no capture covers.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from genson import SchemaBuilder  # type: ignore[import-untyped]  # no stubs, no py.typed

from gecko.convert.infer import ResponseInferrer
from gecko.convert.model import ToolSpec
from gecko.toolkits.resources import plural
from gecko.twin.capture import Capture
from gecko.twin.outcome import ERROR_STATUSES

MEDIA = "application/json"
MAX_ID_CHARS = 80
ID_NAME = re.compile(r"(^id$|_id$|Id$|ID$|_ids$|Ids$)")
NAME_KEY = re.compile(r"(^|_)(id|name|key)s?$|(Id|Name|Key)s?$|^names?$")
"""Argument fields whose values a client chooses and later calls send back (`entities[].name` → `entityName`)."""
DELETE_VERBS = frozenset({"delete", "remove", "destroy", "drop", "erase", "purge", "discard"})
MAX_SHAPES = 3
"""At most this many distinct result shapes (key sets) are learned as branches of their own."""
FRESH_SHARE = 0.8
"""An id-named result field whose value is new in at least this share of results issues ids without a later use."""
NOT_FOUND_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}
WRITE_VERBS = frozenset({"update", "edit", "modify", "change", "set", "delete", "remove", "archive", "cancel", "close",
                         "complete", "mark", "approve", "reject", "resolve", "reopen", "move", "rename", "assign"})


@dataclass
class _ToolFacts:
    """What the captures show about one tool."""

    calls: list[Capture] = field(default_factory=list)
    fresh: Counter[str] = field(default_factory=Counter)
    """Result path → how many results had a value there never seen before."""
    results_at: Counter[str] = field(default_factory=Counter)
    """Result path → how many results had a scalar there."""
    reused: set[str] = field(default_factory=set)
    """Result paths whose fresh values a later call sent back."""
    id_arguments: dict[str, str] = field(default_factory=dict)
    """Argument path → the `tool.path` that issued the values it was sent."""
    echoes_id: int = 0
    """Successful results that repeat the value of one of its id arguments."""
    accepts_unknown: set[str] = field(default_factory=set)
    """Top-level arguments that succeeded with a value no result had issued (the server does not check them)."""


def _scalars(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every id-like scalar (string or integer) in `value`; list positions are `[]`."""
    if isinstance(value, Mapping):
        for key, sub in value.items():
            yield from _scalars(sub, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for sub in value:
            yield from _scalars(sub, f"{path}[]")
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int) or (isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS and " " not in value):
        yield path, value


def _key(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def _last(path: str) -> str:
    parts = [p for p in re.split(r"[.\[\]]+", path) if p]
    return parts[-1] if parts else ""


def _names_an_id(argument: str, result: str) -> bool:
    """An argument sending back a value a result issued carries that id when it is named like an id or like the
    result's field (a count of 3 sent back as a `limit` of 3 is no id)."""
    name = _last(argument)
    return bool(ID_NAME.search(name) or NAME_KEY.search(name)) or name == _last(result)


def _facts(captures: Sequence[Capture]) -> dict[str, _ToolFacts]:
    """One pass over the captures in call order: fresh values, their reuse, and id arguments."""
    facts: dict[str, _ToolFacts] = {}
    seen: set[str] = set()
    issued: dict[str, tuple[str, str]] = {}
    named: dict[str, tuple[str, str]] = {}
    for capture in captures:
        tool = facts.setdefault(capture.tool, _ToolFacts())
        tool.calls.append(capture)
        arguments = list(_scalars(capture.arguments))
        for path, value in arguments:
            source = issued.get(_key(value))
            if source is not None and _names_an_id(path, source[1]):
                tool.id_arguments.setdefault(path, f"{source[0]}.{source[1]}")
                facts[source[0]].reused.add(source[1])
            elif (introduced := named.get(_key(value))) is not None and introduced[0] != capture.tool:
                tool.id_arguments.setdefault(path, f"{introduced[0]}({introduced[1]})")
        if capture.outcome == "ok":
            tool.accepts_unknown.update(p for p, v in arguments if "." not in p and "[" not in p
                                        and _key(v) not in issued)
            for path, value in arguments:
                if NAME_KEY.search(re.split(r"[.\[\]]+", path.strip("[]."))[-1]):
                    named.setdefault(_key(value), (capture.tool, path))
            sent = {_key(v) for _, v in arguments}
            result_values = list(_scalars(capture.result))
            returned = {_key(v) for _, v in result_values}
            if any(_key(v) in returned for p, v in arguments if p in tool.id_arguments):
                tool.echoes_id += 1
            for path, value in result_values:
                tool.results_at[path] += 1
                key = _key(value)
                if key not in seen and key not in sent:
                    tool.fresh[path] += 1
                    issued.setdefault(key, (capture.tool, path))
            seen.update(_key(v) for _, v in result_values)
        seen.update(_key(v) for _, v in arguments)
    return facts


def issuing_paths(tool: _ToolFacts) -> list[str]:
    """Result paths that carry new ids: fresh values sent back later, or an id-named field fresh in most results."""
    out = []
    for path, count in tool.fresh.items():
        name = re.split(r"[.\[\]]+", path.strip("[]."))[-1] if path else ""
        if path in tool.reused or (ID_NAME.search(name) and count >= FRESH_SHARE * tool.results_at[path]):
            out.append(path)
    return sorted(out)


def _result_schema(values: Sequence[Any]) -> dict[str, Any] | None:
    """The schema of a tool's successful results: objects of a few distinct shapes (a task, or `{"message": "No
    tasks available"}`) become `anyOf` one branch per shape, most frequent first, each requiring its keys, so a twin
    answers one real shape rather than a mix of optional keys; otherwise genson's merged schema."""
    if not values or not all(isinstance(v, Mapping) for v in values):
        return _schema_of(values)
    shapes: dict[frozenset[str], list[Any]] = {}
    for value in values:
        shapes.setdefault(frozenset(value), []).append(value)
    if len(shapes) == 1 or len(shapes) > MAX_SHAPES:
        return _schema_of(values)
    ordered = sorted(shapes.values(), key=lambda group: -len(group))
    return {"anyOf": [s for group in ordered if (s := _schema_of(group)) is not None]}


def _schema_of(values: Sequence[Any]) -> dict[str, Any] | None:
    """genson's schema of `values`; a boolean property that had one value in every result is a `const`
    (`{"success": true}` of a tool whose failures say `false`)."""
    if not values:
        return None
    builder = SchemaBuilder()
    for value in values:
        builder.add_object(value)
    schema = builder.to_schema()
    schema.pop("$schema", None)
    objects = [v for v in values if isinstance(v, Mapping)]
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict) or sub.get("type") != "boolean":
            continue
        seen = {bool(v[name]) for v in objects if isinstance(v.get(name), bool)}
        if len(seen) == 1:
            sub["const"] = seen.pop()
    return schema


def _error_branch(bodies: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The in-band error shape: what the error bodies hold, and an `error` message, the one field it requires (what
    the world model's not-found answer fills)."""
    branch = _schema_of(bodies) or {"type": "object"}
    branch.setdefault("properties", {}).setdefault("error", {"type": "string"})
    branch["required"] = ["error"]
    return branch


def _template(capture: Capture) -> tuple[str, str] | None:
    """(message with the id replaced by `{id}`, argument path) when the error text names an argument's value."""
    text = capture.text or (capture.result if isinstance(capture.result, str) else "")
    if isinstance(capture.result, Mapping):
        message = capture.result.get("error") or capture.result.get("message")
        text = message if isinstance(message, str) else text
    candidates = sorted(((p, str(v)) for p, v in _scalars(capture.arguments) if len(str(v)) >= 2),
                        key=lambda pv: -len(pv[1]))
    for path, value in candidates:
        if value in text:
            return text.replace(value, "{id}"), path
    return None


def error_convention(calls: Sequence[Capture]) -> dict[str, Any] | None:
    """How a tool reports its own errors, from its `error` captures (None without any)."""
    errors = [c for c in calls if c.outcome == "error"]
    if not errors:
        return None
    flagged = [c for c in errors if c.is_error]
    convention: dict[str, Any]
    if len(flagged) * 2 >= len(errors):
        convention = {"kind": "isError"}
    else:
        bodies = [c.result for c in errors if isinstance(c.result, Mapping)]
        keys = Counter(tuple(sorted(b)) for b in bodies)
        shape = list(keys.most_common(1)[0][0]) if keys else ["error"]
        convention = {"kind": "body", "fields": shape}
        status = next((b.get("status") for b in bodies if str(b.get("status", "")).lower() in ERROR_STATUSES), None)
        if status is not None:
            convention["status"] = status
    templates = Counter(t for c in errors if (t := _template(c)) is not None)
    if templates:
        (message, argument), _ = templates.most_common(1)[0]
        convention.update(not_found=message, id_argument=argument)
    convention["examples"] = [c.text or str(c.result) for c in errors[:2]]
    return convention


def _noun(name: str) -> str:
    parts = [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
    if parts and parts[-1] in ("id", "ids"):
        parts = parts[:-1]
    return "_".join(parts) or "record"


def _required(op: Mapping[str, Any]) -> set[str]:
    schema = (((op.get("requestBody") or {}).get("content") or {}).get(MEDIA) or {}).get("schema") or {}
    return set(schema.get("required") or [])


def _verb(name: str) -> str:
    words = re.findall(r"[A-Za-z][a-z0-9]*", name)
    return words[0].lower() if words else ""


@dataclass
class LearnReport:
    """What was learned, per tool, for the CLI's summary."""

    calls: int = 0
    tools: dict[str, list[str]] = field(default_factory=dict)
    """Tool → what was learned for it (`result schema`, `error convention`, `create`, …)."""


def _operations(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for item in (doc.get("paths") or {}).values():
        for method, op in (item or {}).items():
            if method in ("get", "post", "put", "patch", "delete") and isinstance(op, dict):
                out[str(op.get("x-gecko-original-name") or op.get("operationId"))] = op
    return out


def _set_result(op: dict[str, Any], schema: dict[str, Any]) -> None:
    ok = op.setdefault("responses", {}).setdefault("200", {"description": "Successful result."})
    ok.setdefault("content", {})[MEDIA] = {"schema": schema}


def learn_toolkit(doc: Mapping[str, Any], captures: Sequence[Capture], *,
                  inferrer: ResponseInferrer | None = None) -> tuple[dict[str, Any], LearnReport]:
    """A copy of `doc` with what `captures` (in call order) show about its tools written in; see the module doc.

    Args:
        doc: a toolkit converted from the server (`gecko convert mcp`).
        captures: real calls of that server, in the order they were made.
        inferrer: infers result schemas from descriptions for tools no successful capture covers (`--model`).
    """
    out = copy.deepcopy(dict(doc))
    operations = _operations(out)
    facts = _facts(captures)
    report = LearnReport(calls=len(captures))
    conventions = {name: c for name, f in facts.items() if (c := error_convention(f.calls)) is not None}
    server_kind = Counter(c["kind"] for c in conventions.values()).most_common(1)
    for name, op in operations.items():
        tool = facts.get(name)
        learned: list[str] = []
        record: dict[str, Any] = {"from": "capture", "calls": 0}
        if tool is not None:
            counts = Counter(c.outcome for c in tool.calls)
            record.update(calls=len(tool.calls), ok=counts["ok"], error=counts["error"], rejected=counts["rejected"])
            convention = conventions.get(name)
            if convention is None and server_kind:
                convention = {"kind": server_kind[0][0], "from": "the server's other tools"}
            learned += _learn_tool(op, name, tool, convention, record)
        elif server_kind:
            op["x-gecko-error-convention"] = {"kind": server_kind[0][0], "from": "the server's other tools"}
            learned.append("error convention (from the server's other tools)")
        if inferrer is not None and op.get("x-gecko-response-origin") == "generic":
            inferred = _infer(op, name, inferrer, out)
            if inferred is not None:
                _set_result(op, inferred)
                op["x-gecko-response-origin"] = "inferred"
                record.setdefault("result_schema", f"inferred by {inferrer.model} from the description")
                learned.append("result schema (model)")
        if learned:
            op["x-gecko-learned"] = record
            report.tools[name] = learned
    collections = _bind(operations, facts, report)
    _not_found_answers(operations, server_kind[0][0] if server_kind else None)
    info = out.setdefault("info", {})
    info["x-gecko-learned"] = {"from": "capture", "calls": len(captures), "tools": sorted(report.tools)}
    if collections:
        state = info.setdefault("x-gecko-default-state", {})
        opened = [c for c in collections if c not in state]
        state.update({c: {} for c in opened})
        info["x-gecko-learned"]["closed_world"] = opened
    return out, report


def _learn_tool(op: dict[str, Any], name: str, tool: _ToolFacts, convention: dict[str, Any] | None,
                record: dict[str, Any]) -> list[str]:
    learned = []
    oks = [c.result for c in tool.calls if c.outcome == "ok"]
    error_bodies = [c.result for c in tool.calls if c.outcome == "error" and not c.is_error
                    and isinstance(c.result, Mapping)]
    in_band = bool(error_bodies) or (convention is not None and convention["kind"] == "body" and bool(tool.id_arguments))
    if op.get("x-gecko-response-origin") in ("generic", "learned") and (oks or in_band):
        success = _result_schema(oks) or {"type": "object"}
        branches = success["anyOf"] if list(success) == ["anyOf"] else [success]
        schema = {"anyOf": [*branches, _error_branch(error_bodies)]} if in_band else success
        _set_result(op, schema)
        op["x-gecko-response-origin"] = "learned"
        record["result_schema"] = f"genson over {len(oks)} results" + (
            f" and {len(error_bodies)} error bodies" if error_bodies else "")
        learned.append("result schema")
    elif op.get("x-gecko-response-origin") == "source" and oks and _pin_flags(op, oks):
        record["result_schema"] = f"the server's, with the flags all {len(oks)} successful results agreed on"
        learned.append("result flags")
    if convention is not None:
        op["x-gecko-error-convention"] = convention
        learned.append("error convention")
        if convention["kind"] == "isError" and (tool.id_arguments or convention.get("id_argument")):
            op.setdefault("responses", {}).setdefault("404", {
                "description": "Not found: the server answers isError with a message (learned from captures).",
                "content": {MEDIA: {"schema": NOT_FOUND_SCHEMA}}})
    issues = issuing_paths(tool)
    if issues or tool.id_arguments:
        op["x-gecko-ids"] = {"issues": issues, "arguments": dict(sorted(tool.id_arguments.items()))}
        learned.append("ids")
    return learned


def _pin_flags(op: dict[str, Any], oks: Sequence[Any]) -> bool:
    """A declared result schema with its boolean properties pinned (`const`) where every success agreed
    (`{"success": true}`): the twin then never answers a success that reads as a failure. The server's own schema
    is kept in the operation's `x-gecko-source-output-schema` (what the twin lists as its `outputSchema`). False when nothing was pinned."""
    content = (((op.get("responses") or {}).get("200") or {}).get("content") or {}).get(MEDIA) or {}
    schema = content.get("schema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    learned = _schema_of(oks) or {}
    pins = {name: sub["const"] for name, sub in (learned.get("properties") or {}).items()
            if isinstance(sub, dict) and "const" in sub and isinstance(props, dict)
            and isinstance(props.get(name), dict) and props[name].get("type") == "boolean"}
    if not pins or not isinstance(schema, dict) or not isinstance(props, dict):
        return False
    op["x-gecko-source-output-schema"] = schema
    content["schema"] = {**schema, "properties": {**props, **{n: {**props[n], "const": v} for n, v in pins.items()}}}
    return True


def _bind(operations: Mapping[str, dict[str, Any]], facts: Mapping[str, _ToolFacts],
          report: LearnReport) -> list[str]:
    """Creates (a top-level field issues new ids), reads (only ids required, none issued, the id echoed), and the
    updates and deletes of what they created; returns the collections of the created records.

    A twin starts with none of the server's records, so those collections start empty (`x-gecko-default-state`):
    an id the twin never issued is not found, in the tool's own error convention.
    """
    issuers: dict[str, tuple[str, str]] = {}
    collections: list[str] = []
    for name, tool in facts.items():
        top = [p for p in issuing_paths(tool) if "." not in p and "[" not in p]
        op = operations.get(name)
        if not top or op is None or op.get("x-gecko-resource") is not None:
            continue
        id_field = top[0]
        noun = _noun(id_field) if id_field != "id" else _noun(name.split("_", 1)[-1])
        issuers[f"{name}.{id_field}"] = (noun, id_field)
        collection = plural(noun)
        collections += [collection] if collection not in collections else []
        op["x-gecko-resource"] = {"resource": noun, "action": "create", "id_field": id_field, "collection": collection}
        _learned_access(op, "write", "learned: its results carry new ids (a create)")
        report.tools.setdefault(name, []).append("create")
    for name, tool in facts.items():
        op = operations.get(name)
        if op is None or op.get("x-gecko-resource") is not None or issuing_paths(tool):
            continue
        top_ids = {a: s for a, s in tool.id_arguments.items() if "." not in a and "[" not in a and s in issuers}
        if not top_ids or not _required(op) <= set(top_ids) or not tool.echoes_id or _verb(name) in WRITE_VERBS:
            continue
        argument, (noun, id_field) = _main_id(top_ids, issuers)
        op["x-gecko-resource"] = {"resource": noun, "action": "read", "id": argument, "id_field": id_field,
                                  "collection": plural(noun)}
        _learned_access(op, "read", "learned: it only takes an issued id, issues none and returns that record")
        report.tools.setdefault(name, []).append("read")
    by_name = {a: s for tool in facts.values() for a, s in tool.id_arguments.items() if s in issuers}
    for name, op in operations.items():
        tool = facts.get(name) or _ToolFacts()
        top_ids = {a: s for a, s in tool.id_arguments.items() if "." not in a and "[" not in a and s in issuers}
        if not top_ids:  # no capture sent it an issued id: an argument named like one that carried them elsewhere
            top_ids = {a: by_name[a] for a in sorted(_required(op)) if a in by_name}
        top_ids = {a: s for a, s in top_ids.items() if a not in tool.accepts_unknown}
        if op.get("x-gecko-resource") is not None or issuing_paths(tool) or not top_ids:
            continue
        argument, (noun, id_field) = _main_id(top_ids, issuers)
        action = "delete" if _verb(name) in DELETE_VERBS else "update"
        op["x-gecko-resource"] = {"resource": noun, "action": action, "id": argument, "id_field": id_field,
                                  "collection": plural(noun)}
        report.tools.setdefault(name, []).append(action)
    return collections


def _not_found_answers(operations: Mapping[str, dict[str, Any]], server_kind: str | None) -> None:
    """Every bound read, update or delete can answer not-found in its convention (its own, else the server's): an
    `{error}` branch in its result (in-band errors) or a declared 404 (`isError`)."""
    for op in operations.values():
        binding = op.get("x-gecko-resource")
        if not isinstance(binding, dict) or binding.get("action") not in ("read", "update", "delete"):
            continue
        convention = op.get("x-gecko-error-convention") or {}
        kind = convention.get("kind") or server_kind
        responses = op.setdefault("responses", {})
        if kind == "isError":
            responses.setdefault("404", {"description": "Not found: the server answers isError with a message "
                                                        "(learned from captures).",
                                         "content": {MEDIA: {"schema": NOT_FOUND_SCHEMA}}})
        elif kind == "body":
            schema = ((responses.get("200") or {}).get("content") or {}).get(MEDIA, {}).get("schema") or {}
            if not any(isinstance(b, dict) and b.get("required") == ["error"] for b in schema.get("anyOf") or []):
                success = {"type": "object"} if op.get("x-gecko-response-origin") == "generic" else schema
                _set_result(op, {"anyOf": [success, _error_branch([])]})
                if op.get("x-gecko-response-origin") == "generic":
                    op["x-gecko-response-origin"] = "learned"


def _main_id(ids: Mapping[str, str], issuers: Mapping[str, tuple[str, str]]) -> tuple[str, tuple[str, str]]:
    """The id argument a tool acts on: the one named like its record's id field, else the first."""
    for argument, source in ids.items():
        if argument == issuers[source][1]:
            return argument, issuers[source]
    argument = next(iter(ids))
    return argument, issuers[ids[argument]]


def _learned_access(op: dict[str, Any], access: str, reason: str) -> None:
    """Set the access unless the server stated it (annotations) or the user did."""
    provenance = op.setdefault("x-gecko-provenance", {})
    if "access" in provenance and not str(provenance["access"]).startswith("learned"):
        return
    op["x-gecko-access"] = access
    provenance["access"] = reason


def _infer(op: Mapping[str, Any], name: str, inferrer: ResponseInferrer, doc: Mapping[str, Any]) -> dict[str, Any] | None:
    parameters = (((op.get("requestBody") or {}).get("content") or {}).get(MEDIA) or {}).get("schema") or {}
    spec = ToolSpec(name=name, description=str(op.get("description") or ""), parameters=parameters)
    schemas = ((doc.get("components") or {}).get("schemas") or {})
    found = inferrer.tool(spec, dict(schemas))
    return found.response if found.response_origin == "inferred" else None


__all__ = ["LearnReport", "error_convention", "issuing_paths", "learn_toolkit"]
