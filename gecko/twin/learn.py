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
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gecko.convert.infer import ResponseInferrer
from gecko.convert.model import ToolSpec
from gecko.twin.bindings import bind, not_found_answers
from gecko.twin.capture import Capture
from gecko.twin.evidence import ToolFacts, error_convention, gather_facts, issuing_paths
from gecko.twin.shapes import MEDIA, NOT_FOUND_SCHEMA, error_branch, pin_flags, result_schema, set_result


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
    facts = gather_facts(captures)
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
                set_result(op, inferred)
                op["x-gecko-response-origin"] = "inferred"
                record.setdefault("result_schema", f"inferred by {inferrer.model} from the description")
                learned.append("result schema (model)")
        if learned:
            op["x-gecko-learned"] = record
            report.tools[name] = learned
    collections = bind(operations, facts, report.tools)
    not_found_answers(operations, server_kind[0][0] if server_kind else None)
    info = out.setdefault("info", {})
    info["x-gecko-learned"] = {"from": "capture", "calls": len(captures), "tools": sorted(report.tools)}
    if collections:
        state = info.setdefault("x-gecko-default-state", {})
        opened = [c for c in collections if c not in state]
        state.update({c: {} for c in opened})
        info["x-gecko-learned"]["closed_world"] = opened
    return out, report


def _learn_tool(op: dict[str, Any], name: str, tool: ToolFacts, convention: dict[str, Any] | None,
                record: dict[str, Any]) -> list[str]:
    learned = []
    oks = [c.result for c in tool.calls if c.outcome == "ok"]
    error_bodies = [c.result for c in tool.calls if c.outcome == "error" and not c.is_error
                    and isinstance(c.result, Mapping)]
    in_band = bool(error_bodies) or (convention is not None and convention["kind"] == "body" and bool(tool.id_arguments))
    if op.get("x-gecko-response-origin") in ("generic", "learned") and (oks or in_band):
        success = result_schema(oks) or {"type": "object"}
        branches = success["anyOf"] if list(success) == ["anyOf"] else [success]
        schema = {"anyOf": [*branches, error_branch(error_bodies)]} if in_band else success
        set_result(op, schema)
        op["x-gecko-response-origin"] = "learned"
        record["result_schema"] = f"genson over {len(oks)} results" + (
            f" and {len(error_bodies)} error bodies" if error_bodies else "")
        learned.append("result schema")
    elif op.get("x-gecko-response-origin") == "source" and oks and pin_flags(op, oks):
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


def _infer(op: Mapping[str, Any], name: str, inferrer: ResponseInferrer, doc: Mapping[str, Any]) -> dict[str, Any] | None:
    parameters = (((op.get("requestBody") or {}).get("content") or {}).get(MEDIA) or {}).get("schema") or {}
    spec = ToolSpec(name=name, description=str(op.get("description") or ""), parameters=parameters)
    schemas = ((doc.get("components") or {}).get("schemas") or {})
    found = inferrer.tool(spec, dict(schemas))
    return found.response if found.response_origin == "inferred" else None


__all__ = ["LearnReport", "error_convention", "issuing_paths", "learn_toolkit"]
