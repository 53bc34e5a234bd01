"""Gecko's own OpenAPI document (`/openapi.json`): the real API, errors and tools included.

FastAPI describes the fixed routes from their pydantic models; `gecko_openapi` adds what it cannot see:

- every error as `application/problem+json` (the `Problem` schema) with the status codes each route sends
  (routes declare them with `problem_responses`), FastAPI's `HTTPValidationError` replaced by `Problem`;
- the tools, which depend on the toolkits loaded: each tool twice, as `POST /{toolkit}/{operationId}`
  (request body = the tool's argument schema) and on its document's own method and path under
  `/{toolkit}` (its parameters and request body); the tool's declared success status (200, 201, 204…) carries its
  response schema (`$defs` become components named `<toolkit>.<name>`). The bare document paths (without `/{toolkit}`) also work, but are
  not listed: two toolkits may share a path;
- `X-Session-ID` as a required header, and the loaded toolkit names as the only valid ones in bodies;
- links from the responses that create a session to every operation that takes one (path `session_id` or
  header `X-Session-ID`), so clients and fuzzers can chain calls;
- the bearer scheme when the server has an API key (`/health` also answers without it).
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any

from fastapi.openapi.utils import get_openapi

from gecko.api.problems import PROBLEM_MEDIA_TYPE, Problem
from gecko.toolkits.model import BODY_KEY

if TYPE_CHECKING:
    from fastapi import FastAPI

    from gecko.api.deps import GeckoContext
    from gecko.toolkits.model import Operation

PROBLEM_REF = "#/components/schemas/Problem"
REASONS: dict[int, str] = {
    400: "Bad request: the body is not JSON (or is empty where one is needed), or the X-Session-ID header is missing.",
    401: "The server requires `Authorization: Bearer <key>`.",
    404: "Unknown session, tool, toolkit or state version.",
    405: "The path exists, with other methods (see the Allow header).",
    409: "The session's state changed under the call; retry.",
    413: "The body exceeds a limit: bytes, nesting depth, array items, JSON values or string length.",
    415: "The body is not `application/json`.",
    422: "The request is well-formed JSON but invalid: every violation is listed in `errors`.",
    501: "The server lacks an optional feature this route needs (e.g. tool search without the `search` extra).",
    502: "The judge (an LLM) could not produce a verdict.",
    503: "Not ready or busy: the session is busy, the session store is unreachable, or (tool search) the dense index "
         "is being built; retry after `Retry-After` seconds.",
}
BODY_PROBLEMS = (400, 413, 415, 422)
"""What any route with a JSON body can answer about that body."""
SESSION_PROBLEMS = (400, 404, 503)
"""What a route that takes the session from `X-Session-ID` can answer about it."""
_TOOL_PROBLEMS = (400, 404, 405, 409, 413, 415, 422, 503)
_SESSION_HEADER = "X-Session-ID"
_COMPONENT_NAME = re.compile(r"[^A-Za-z0-9._-]")


def problem_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route: each status code as a problem+json response."""
    return {code: {"description": REASONS[code], "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": PROBLEM_REF}}}}
            for code in codes}


def gecko_openapi(app: FastAPI, ctx: GeckoContext) -> dict[str, Any]:
    """Build the OpenAPI document of `app` (cached on `app.openapi_schema`)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    doc = get_openapi(title=app.title, version=app.version, openapi_version=app.openapi_version,
                      description=app.description, routes=app.routes)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    _add_model(schemas, Problem)
    _problems_for_validation_errors(doc)
    _require_session_header(doc)
    _name_the_toolkits(schemas, sorted(ctx.registry.toolkits))
    for toolkit in ctx.registry.toolkits.values():
        for operation in toolkit.operations.values():
            path = f"/{operation.toolkit}/{operation.call_name}"
            doc["paths"].setdefault(path, {}).setdefault("post", _tool_operation(operation, schemas))
            own = f"/{operation.toolkit}{operation.path}"
            doc["paths"].setdefault(own, {}).setdefault(operation.method.lower(), _route_operation(operation, schemas))
    _link_sessions(doc)
    if ctx.settings.api_key is not None and ctx.settings.api_key.get_secret_value():
        _secure(doc)
    app.openapi_schema = doc
    return doc


def _add_model(schemas: dict[str, Any], model: type[Problem]) -> None:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(schema.pop("$defs", {}))
    schemas[model.__name__] = schema


def _problems_for_validation_errors(doc: dict[str, Any]) -> None:
    """FastAPI documents its own 422 (`HTTPValidationError`); Gecko answers those as problems."""
    for item in doc["paths"].values():
        for operation in item.values():
            for status, response in operation.get("responses", {}).items():
                content = response.get("content", {})
                schema = content.get("application/json", {}).get("schema", {})
                if schema.get("$ref", "").endswith("/HTTPValidationError"):
                    response["content"] = {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": PROBLEM_REF}}}
                    response["description"] = REASONS[int(status)]
    schemas = doc["components"]["schemas"]
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)


def _require_session_header(doc: dict[str, Any]) -> None:
    """`X-Session-ID` is optional to FastAPI (a missing one is our own 400), but required by the API."""
    for item in doc["paths"].values():
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "header" and parameter.get("name") == _SESSION_HEADER:
                    parameter["required"] = True
                    parameter["schema"] = {"type": "string", "minLength": 1, "pattern": r"\S"}


def _name_the_toolkits(schemas: dict[str, Any], names: list[str]) -> None:
    """Where a body names toolkits, only the loaded ones are valid (an unknown one is a 422)."""
    toolkit: dict[str, Any] = {"type": "string", "enum": names} if names else {"not": {}}
    for model, field in (("SessionConfig", "toolkits"), ("InitStateBody", "involved_classes"),
                         ("RealToolCall", "toolkit")):
        prop = schemas.get(model, {}).get("properties", {}).get(field)
        if prop is None:
            continue
        for branch in prop.get("anyOf", [prop]):
            if branch.get("type") == "array":
                branch["items"] = toolkit
            elif branch.get("type") == "string":
                branch.update(toolkit)


def _headers() -> dict[str, Any]:
    return {
        _SESSION_HEADER: {"description": "The session the call ran in.", "required": True,
                          "schema": {"type": "string"}},
        "X-Gecko-State-Version": {"description": "The session's state version after the call.", "required": True,
                                  "schema": {"type": "string", "pattern": "^[0-9]+$"}},
        "X-Gecko-Semantic": {"description": "Outcome of the semantic check (`skipped` without a validator model).",
                             "required": True, "schema": {"type": "string"}},
        "X-Gecko-State": {"description": "`pending` while a deferred state update runs.",
                          "schema": {"type": "string", "enum": ["pending"]}},
    }


def _session_parameter() -> dict[str, Any]:
    return {"name": _SESSION_HEADER, "in": "header", "required": True,
            "schema": {"type": "string", "minLength": 1, "pattern": r"\S"},
            "description": "The session to call the tool in (GET /session-id or POST /sessions)."}


def _message_parameter() -> dict[str, Any]:
    return {"name": "X-Gecko-Message", "in": "header", "required": False,
            "schema": {"type": "string", "pattern": r"^[A-Za-z0-9._:-]{1,64}$"},
            "description": "The id of the model message that issued the call: identical calls of one message are "
                           "parallel calls, which the gating judge does not count as repeats."}


def _responses(operation: Operation, schemas: dict[str, Any], prefix: str) -> dict[str, Any]:
    declared = operation.response_schema
    response = (_hoisted(declared, prefix, schemas) if isinstance(declared, dict)
                else {"not": {}} if declared is False else {})
    success: dict[str, Any] = {"description": "The simulated response, with the status the tool's operation "
                                              "declares (201 for a create that declares it, 204 without a body…); "
                                              "it always fits the tool's response schema.",
                               "headers": _headers()}
    if operation.success_has_body:
        success["content"] = {"application/json": {"schema": response}}
    responses: dict[str, Any] = {
        str(operation.success_status): success,
        **{str(code): spec for code, spec in problem_responses(*_TOOL_PROBLEMS).items()},
    }
    if operation.not_found_declared:  # the world model answers a missing record with the tool's own 404
        schema = operation.not_found_schema
        missing = responses["404"]
        missing["description"] += " Or the tool's own 404 (a record the session's world does not hold)."
        missing["content"]["application/json"] = {"schema": _hoisted(schema, prefix, schemas) if schema else {}}
    return responses


def _route_operation(operation: Operation, schemas: dict[str, Any]) -> dict[str, Any]:
    """The tool on its document's own method and path (under `/{toolkit}`): its parameters, its body."""
    prefix = _COMPONENT_NAME.sub("_", operation.toolkit) + "."
    arguments = _hoisted(operation.args_schema, prefix, schemas)
    properties = arguments.get("properties", {})
    parameters = [_session_parameter(), _message_parameter()]
    for param in operation.parameters:
        if param.location in ("path", "query", "header") and param.name in properties:
            parameters.append({"name": param.name, "in": param.location, "required": param.required or
                               param.location == "path", "schema": properties[param.name]})
    spec: dict[str, Any] = {
        "tags": ["tools"],
        "operationId": f"route.{operation.toolkit}.{operation.operation_id}",
        "summary": operation.summary or f"Call {operation.tool_name}",
        "description": f"The tool `{operation.tool_name}` on its document's own route.",
        "parameters": parameters,
        "responses": _responses(operation, schemas, prefix),
    }
    body = _body_schema(operation, arguments)
    if body is not None:
        spec["requestBody"] = {"required": operation.body_required,
                               "content": {"application/json": {"schema": body}}}
    return spec


def _body_schema(operation: Operation, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The request body's schema, recovered from the arguments schema (parameters + body)."""
    if operation.body_mode == "none":
        return None
    if operation.body_mode == "nested":
        return arguments["properties"][BODY_KEY]
    params = {p.name for p in operation.parameters}
    body = {k: v for k, v in arguments.items() if k not in ("properties", "required")}
    body["properties"] = {k: v for k, v in arguments.get("properties", {}).items() if k not in params}
    required = [name for name in arguments.get("required", []) if name not in params]
    if required:
        body["required"] = required
    return body


def _tool_operation(operation: Operation, schemas: dict[str, Any]) -> dict[str, Any]:
    prefix = _COMPONENT_NAME.sub("_", operation.toolkit) + "."
    arguments = _hoisted(operation.args_schema, prefix, schemas)
    return {
        "tags": ["tools"],
        "operationId": f"tool.{operation.toolkit}.{operation.operation_id}",
        "summary": operation.summary or f"Call {operation.tool_name}",
        "description": operation.description or operation.summary or "",
        "x-gecko-access": operation.access,
        "x-gecko-document-route": f"{operation.method.upper()} {operation.path}",
        "parameters": [_session_parameter(), _message_parameter()],
        "requestBody": {"required": bool(arguments.get("required")),
                        "content": {"application/json": {"schema": arguments}}},
        "responses": _responses(operation, schemas, prefix),
    }


def _hoisted(schema: dict[str, Any], prefix: str, schemas: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its `$defs` moved into the components (as `<prefix><name>`) and its `$ref`s pointed there."""
    schema = copy.deepcopy(schema)
    defs = schema.pop("$defs", {}) if isinstance(schema, dict) else {}
    names = {name: prefix + _COMPONENT_NAME.sub("_", name.removeprefix("components~1schemas~1").replace("~1", "."))
             for name in defs}

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in names:
                node = {**node, "$ref": f"#/components/schemas/{names[ref[8:]]}"}
            return {key: rewrite(value) for key, value in node.items()}
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    for name, definition in defs.items():
        schemas.setdefault(names[name], rewrite(definition))
    return rewrite(schema)


def _link_sessions(doc: dict[str, Any]) -> None:
    """Links from every response that returns a new `session_id` to every operation that takes a session."""
    by_path: dict[str, dict[str, Any]] = {}
    by_header: dict[str, dict[str, Any]] = {}
    for item in doc["paths"].values():
        for operation in item.values():
            name = operation.get("operationId")
            if name is None:
                continue
            params = operation.get("parameters", [])
            if any(p.get("in") == "path" and p.get("name") == "session_id" for p in params):
                by_path[name] = {"operationId": name, "parameters": {"path.session_id": "$response.body#/session_id"}}
            elif any(p.get("in") == "header" and p.get("name") == _SESSION_HEADER for p in params):
                by_header[name] = {"operationId": name,
                                   "parameters": {f"header.{_SESSION_HEADER}": "$response.body#/session_id"}}
    links = {**by_path, **by_header}
    creators = [("/sessions", "post", "201"), ("/session-id", "get", "200"),
                ("/sessions/{session_id}/fork", "post", "201")]
    for path, method, status in creators:
        response = doc["paths"].get(path, {}).get(method, {}).get("responses", {}).get(status)
        if response is not None:
            response["links"] = {_COMPONENT_NAME.sub("_", name): link for name, link in links.items()}


def _secure(doc: dict[str, Any]) -> None:
    doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    doc["security"] = [{"bearer": []}]
    unauthorized = problem_responses(401)[401]
    for path, item in doc["paths"].items():
        for operation in item.values():
            if path == "/health":
                operation["security"] = [{}, {"bearer": []}]
            else:
                operation.setdefault("responses", {})["401"] = unauthorized
