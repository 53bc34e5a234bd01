"""Calls on the real HTTP API an OpenAPI toolkit describes: the operation's method and path under a base URL.

The arguments object is split back the way Gecko built it (`gecko.api.arguments`): path, query, header and
cookie parameters by name, and the body (the remaining properties when it was merged, `body` when nested).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from gecko.toolkits.model import BODY_KEY, Operation
from gecko.upstream.errors import UpstreamError
from gecko.upstream.result import UpstreamResult, parse_text
from gecko.upstream.spec import HttpUpstream


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def build_request(operation: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of `httpx.AsyncClient.request` for one call (URL relative to the base URL)."""
    path = operation.path
    params: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    cookies: dict[str, str] = {}
    names = set()
    for param in operation.parameters:
        names.add(param.name)
        if param.name not in arguments:
            continue
        value = arguments[param.name]
        if param.location == "path":
            path = path.replace("{" + param.name + "}", quote(_scalar(value), safe=""))
        elif param.location == "query":
            values = value if isinstance(value, list) else [value]
            params += [(param.name, _scalar(v)) for v in values]
        elif param.location == "header":
            headers[param.name] = _scalar(value)
        else:
            cookies[param.name] = _scalar(value)
    request: dict[str, Any] = {"method": operation.method.upper(), "url": path.lstrip("/"), "params": params,
                               "headers": headers, "cookies": cookies}
    if operation.body_mode == "merged":
        body = {k: v for k, v in arguments.items() if k not in names}
        if body or operation.body_required:
            request["json"] = body
    elif operation.body_mode == "nested" and BODY_KEY in arguments:
        request["json"] = arguments[BODY_KEY]
    return request


class RestUpstream:
    """One real HTTP API; one connection pool per worker."""

    def __init__(self, spec: HttpUpstream, timeout: float) -> None:
        self.spec = spec
        base = spec.base_url if spec.base_url.endswith("/") else spec.base_url + "/"
        self._client = httpx.AsyncClient(base_url=base, headers=spec.headers, timeout=timeout)

    async def call_operation(self, operation: Operation, arguments: dict[str, Any]) -> UpstreamResult:
        """Send the call; any HTTP status is a result (4xx/5xx are `is_error`).

        Raises:
            UpstreamError: no connection, or no answer within the timeout.
        """
        try:
            reply = await self._client.request(**build_request(operation, arguments))
        except httpx.HTTPError as exc:
            raise UpstreamError(f"{self.spec.base_url}: {type(exc).__name__}: {exc}") from None
        media = reply.headers.get("content-type", "").split(";")[0].strip().lower()
        if media == "application/json" or media.endswith("+json"):
            try:
                body: Any = reply.json()
            except ValueError:
                body = reply.text
        else:
            body = parse_text(reply.text) if reply.text else None
        return UpstreamResult(body=body, is_error=reply.status_code >= 400, status=reply.status_code)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()
