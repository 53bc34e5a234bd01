"""Shared request dependencies: the app context, the session header, and strict JSON body parsing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Header, Request
from pydantic import BaseModel, ValidationError

from gecko.api.problems import ProblemError, bad_request
from gecko.pipeline.runner import CallRunner
from gecko.pipeline.stages import Engines
from gecko.sessions.store import SessionStore
from gecko.toolkits.registry import ToolkitRegistry
from utils.jsonlimits import JsonLimitExceeded, JsonValueRejected, LimitName, parse_json
from utils.settings import Settings

ModelT = TypeVar("ModelT", bound=BaseModel)
SESSION_HEADER = "X-Session-ID"
MAX_INT64 = 2**63 - 1
"""Largest integer a query parameter (offset, limit, version) takes: the stores' integer range."""
LIMIT_FLAGS: dict[LimitName, str] = {"depth": "--max-json-depth", "array_items": "--max-array-items",
                                     "nodes": "--max-json-nodes", "string_chars": "--max-string-chars"}
"""The server flag of each JSON limit, named in the 413 that it causes."""


@dataclass
class GeckoContext:
    """Everything a request handler needs; one per worker process, built by `create_app`."""

    settings: Settings
    registry: ToolkitRegistry
    store: SessionStore
    engines: Engines
    runner: CallRunner
    started: float
    version: str


def get_context(request: Request) -> GeckoContext:
    return request.app.state.gecko


ContextDep = Annotated[GeckoContext, Depends(get_context)]


def require_session_header(x_session_id: Annotated[str | None, Header(alias=SESSION_HEADER)] = None) -> str:
    if not x_session_id or not x_session_id.strip():
        raise bad_request(
            f"missing {SESSION_HEADER} header; create a session with GET /session-id or POST /sessions "
            f"and send its id in {SESSION_HEADER}",
            kind="missing-session-id",
        )
    return x_session_id.strip()


SessionHeaderDep = Annotated[str, Depends(require_session_header)]


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


async def read_json(request: Request, *, default: Any = None) -> Any:
    """The request's JSON body: 415 for another content type, 413 when too large (bytes or a JSON limit), 400
    when malformed, 422 for a lone surrogate or a non-finite number."""
    limit = request.app.state.gecko.settings.max_body_bytes
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ProblemError(413, "Payload too large", f"request body exceeds the limit of {limit} bytes",
                           "payload-too-large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ProblemError(413, "Payload too large", f"request body exceeds the limit of {limit} bytes",
                               "payload-too-large")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        if default is not None:
            return default
        raise bad_request("request body is empty; send a JSON object", kind="empty-body")
    content_type = request.headers.get("content-type", "")
    if not _is_json(content_type):
        raise ProblemError(415, "Unsupported media type",
                           f"send the body as application/json (got {content_type or 'no content type'})",
                           "unsupported-media-type")
    try:
        return parse_json(raw, request.app.state.gecko.settings.json_limits())
    except JsonLimitExceeded as exc:
        raise ProblemError(413, "Payload too large", f"request body has {exc}; this server accepts no more "
                           f"({LIMIT_FLAGS[exc.limit]})", "body-limit-exceeded", limit=exc.limit,
                           maximum=exc.maximum, pointer=exc.pointer) from exc
    except JsonValueRejected as exc:
        raise ProblemError(422, "Invalid JSON value", str(exc), "invalid-json-value",
                           errors=[{"pointer": exc.pointer, "keyword": exc.keyword, "message": str(exc)}]) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad_request(f"request body is not valid JSON: {exc}", kind="malformed-json") from exc


async def parse_body(request: Request, model: type[ModelT], *, optional: bool = False) -> ModelT:
    """Read the JSON body into `model`; envelope errors are 422 problems naming each field."""
    data = await read_json(request, default={} if optional else None)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [
            {"pointer": "".join(f"/{p}" for p in err["loc"]), "keyword": err["type"], "message": err["msg"]}
            for err in exc.errors(include_url=False, include_input=False)
        ]
        detail = " ".join(f"{e['pointer'] or 'body'}: {e['message']}." for e in errors)
        raise ProblemError(422, "Invalid request body", detail, "invalid-body", errors=errors) from exc
