"""Shared request dependencies: the app context, the session header, and strict JSON body parsing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Header, Request
from pydantic import BaseModel, ValidationError

from gecko.api.problems import ProblemError, bad_request
from gecko.pipeline.runner import CallRunner
from gecko.pipeline.stages import Engines
from gecko.sessions.store import SessionStore
from gecko.toolkits.registry import ToolkitRegistry
from utils.jsonutil import loads
from utils.settings import Settings

ModelT = TypeVar("ModelT", bound=BaseModel)
SESSION_HEADER = "X-Session-ID"


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
    """The request's JSON body: 415 for another content type, 413 when too large, 400 when malformed."""
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
        return loads(raw)  # orjson; the standard parser below also takes what orjson refuses (huge integers)
    except ValueError:
        pass
    try:
        return json.loads(raw)
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
