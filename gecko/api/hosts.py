"""DNS-rebinding protection for every route (REST API, `/ui`, `/mcp`): only configured host names are answered.

A web page whose name rebinds to 127.0.0.1 sends its own name in `Host` (and its origin in `Origin`); Gecko answers
only the loopback names, the address it is bound to and the names of `--allowed-hosts` (`*`: any), on any port.
Another `Host` is a 421, another `Origin` a 403 (browsers send `Origin` on cross-site requests; other clients send
none). One pure-ASGI middleware, installed outermost, so nothing behind it (the key check, the MCP SDK) runs first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})


def accepted_hosts(bind: str, extra: Iterable[str]) -> frozenset[str]:
    """The host names (lower case, IPv6 in brackets, no port) a server bound to `bind` answers; `*` means any."""
    names = set(LOOPBACK_NAMES) | {name.strip().lower() for name in extra if name.strip()}
    if bind not in _WILDCARD_BINDS:
        names.add(f"[{bind.lower()}]" if ":" in bind else bind.lower())
    return frozenset(names)


def host_name(value: str) -> str:
    """`Host` header value → its name without the port (`[::1]:8000` → `[::1]`, `Example.COM:80` → `example.com`)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _origin_name(origin: str) -> str:
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    return f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname


class HostCheckMiddleware:
    """Refuse requests whose `Host` (421) or `Origin` (403) names a host this server does not answer to."""

    def __init__(self, app: Any, allowed: frozenset[str]) -> None:
        self.app = app
        self._allowed = allowed
        self._any = "*" in allowed

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self._any:
            await self.app(scope, receive, send)
            return
        host = origin = None
        for name, value in scope.get("headers", []):
            if name == b"host":
                host = value.decode("latin-1")
            elif name == b"origin":
                origin = value.decode("latin-1")
        if host is None or host_name(host) not in self._allowed:
            await _refuse(send, 421, "Misdirected request", f"this server does not answer to the host name "
                          f"{host_name(host or '')!r}; the operator names more with --allowed-hosts")
            return
        if origin is not None and _origin_name(origin) not in self._allowed:
            await _refuse(send, 403, "Forbidden origin", f"requests from pages of {origin[:200]!r} are refused; "
                          "the operator names more hosts with --allowed-hosts")
            return
        await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, title: str, detail: str) -> None:
    body = json.dumps({"type": f"urn:gecko:problem:{'misdirected' if status == 421 else 'forbidden-origin'}",
                       "title": title, "status": status, "detail": detail}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
