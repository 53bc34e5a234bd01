"""Shared request dependencies: the app context, the session header, and strict JSON body reading.

Routes with a pydantic body parameter use `GeckoRoute` (`APIRouter(route_class=GeckoRoute)`): FastAPI then
reads the body through `JsonBodyRequest`, which applies the byte limit, the JSON content type and the JSON
limits and answers problems (413, 415, 400, 422) before the body reaches pydantic. Tool calls, whose
bodies are checked against each tool's schema instead, call `read_json`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Header, Request, Response
from fastapi.routing import APIRoute

from gecko.api.problems import ProblemError, bad_request
from gecko.pipeline.runner import CallRunner
from gecko.pipeline.stages import Engines
from gecko.sessions.store import SessionStore
from gecko.telemetry.metrics import GeckoMetrics
from gecko.toolkits.model import Toolkit
from gecko.toolkits.registry import ToolkitRegistry
from gecko.toolkits.search import ToolIndex
from utils.jsonlimits import JsonLimitExceeded, JsonValueRejected, LimitName, parse_json
from utils.settings import Settings

SESSION_HEADER = "X-Session-ID"
MESSAGE_HEADER = "X-Gecko-Message"
"""Optional on a tool call: the id of the model message that issued it. Calls with the same id are parallel calls
of one message, so the gating judge does not count identical ones as repeats."""
_MESSAGE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
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
    search: ToolIndex
    """Tool retrieval over every loaded tool (`GET /tools/search`, the MCP tool `search_tools`)."""
    metrics: GeckoMetrics = field(default_factory=GeckoMetrics)
    """The worker's Prometheus metrics (`GET /metrics` sums every worker's)."""


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


def message_header(value: str | None) -> str | None:
    """The `X-Gecko-Message` of a tool call (None when absent); 400 when it is not 1–64 of `A-Za-z0-9._:-`."""
    if value is None:
        return None
    if not _MESSAGE_ID.match(value):
        raise bad_request(f"{MESSAGE_HEADER} must be 1-64 characters of A-Z a-z 0-9 . _ : - (the id of the model "
                          "message that issued the call)", kind="invalid-message-id")
    return value


async def toolkit_off_loop(registry: ToolkitRegistry, name: str) -> Toolkit | None:
    """`registry.toolkit(name)`; on a toolkit's first use (registered from a prebuilt index) its document is compiled
    in a thread, not on the event loop every other request of this worker waits for."""
    if registry.lookup_loads(name):
        return await asyncio.to_thread(registry.toolkit, name)
    return registry.toolkit(name)


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _too_large(limit: int) -> ProblemError:
    return ProblemError(413, "Payload too large", f"request body exceeds the limit of {limit} bytes (--max-body-bytes)",
                        "payload-too-large")


async def read_body(request: Request) -> bytes:
    """The request's body bytes: 413 beyond `--max-body-bytes` (declared or sent), 415 for a non-JSON content type."""
    limit = request.app.state.gecko.settings.max_body_bytes
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    raw = b"".join(chunks)
    content_type = request.headers.get("content-type", "")
    if raw.strip() and not _is_json(content_type):
        raise ProblemError(415, "Unsupported media type",
                           f"send the body as application/json (got {content_type or 'no content type'})",
                           "unsupported-media-type")
    return raw


def decode_json(request: Request, raw: bytes) -> Any:
    """Parse a body with the server's JSON limits: 413 naming a limit, 422 for an unstorable value, 400 if not JSON."""
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


async def read_json(request: Request, *, default: Any = None) -> Any:
    """The request's JSON body (see `read_body`, `decode_json`); `default` for an empty body, else 400."""
    raw = await read_body(request)
    if not raw.strip():
        if default is not None:
            return default
        raise bad_request("request body is empty; send a JSON object", kind="empty-body")
    return decode_json(request, raw)


class JsonBodyRequest(Request):
    """The request FastAPI reads bodies from: Gecko's size, content-type and JSON limits, problems on failure."""

    async def body(self) -> bytes:
        if not hasattr(self, "_body"):
            self._body = await read_body(self)
        return self._body

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = decode_json(self, await self.body())
        return self._json


class GeckoRoute(APIRoute):
    """A route whose pydantic body parameter is read through `JsonBodyRequest`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def with_json_limits(request: Request) -> Response:
            return await handler(JsonBodyRequest(request.scope, request.receive))

        return with_json_limits
