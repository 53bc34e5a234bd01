"""What each intervention does to a call's outcome, the same on both sides (Gecko's pipeline and the runners'
real-tool bridges): the error a blocking fault answers with, how a result is corrupted, how a constraint notice
rides on a result.

The errors look like a real service's (status, title, detail, `Retry-After`); they never say they were injected.
Whoever reads the history or a trace can tell: every injection is recorded there (`Injection.public()`).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from utils.faults.engine import Injection
from utils.faults.policy import MAX_DELAY_SECONDS

NOTICE_KEY = "_notice"
"""The member a constraint notice is attached under (an object result keeps its fields; others are wrapped)."""
SERVICE_ERROR_STATUSES = frozenset({401, 408, 429, 500, 502, 503, 504})
"""Statuses of a service failing a call (not the caller's arguments): retrying may succeed."""
MAX_CORRUPT_PATHS = 256


@dataclass(frozen=True)
class ServiceError:
    """The error a blocking fault answers with."""

    status: int
    title: str
    slug: str
    """Problem type slug (`urn:gecko:problem:<slug>`)."""
    detail: str
    retry_after: float | None = None
    """Seconds, for a `Retry-After` header."""

    def payload(self) -> dict[str, Any]:
        """The error as a JSON object (what a real-tool bridge shows the agent)."""
        out: dict[str, Any] = {"error": self.title, "status": self.status, "detail": self.detail}
        if self.retry_after is not None:
            out["retry_after"] = self.retry_after
        return out

    def headers(self) -> dict[str, str]:
        """HTTP headers of the error (`Retry-After`)."""
        if self.retry_after is None:
            return {}
        return {"Retry-After": f"{self.retry_after:g}"}


_SERVER_ERROR_TITLES = {500: "Internal Server Error", 502: "Bad Gateway", 504: "Gateway Timeout"}


def service_error(injection: Injection) -> ServiceError:
    """The error of a blocking injection.

    Raises:
        ValueError: the injection does not block.
    """
    params = injection.params
    if injection.kind == "timeout":
        return ServiceError(504, "Gateway Timeout", "timeout",
                            f"the service did not answer within {float(params.get('seconds', 30)):g} s")
    if injection.kind == "rate_limit":
        after = float(params.get("retry_after", 1))
        return ServiceError(429, "Too Many Requests", "rate-limited",
                            f"rate limit exceeded; retry after {after:g} s", after)
    if injection.kind == "unavailable":
        after = float(params.get("retry_after", 1))
        return ServiceError(503, "Service Unavailable", "service-unavailable",
                            f"the service is temporarily unavailable; retry after {after:g} s", after)
    if injection.kind == "server_error":
        status = int(params.get("status", 500))
        return ServiceError(status, _SERVER_ERROR_TITLES.get(status, "Server Error"), "server-error",
                            "the service failed to process the request")
    if injection.kind == "expire_session":
        return ServiceError(401, "Session expired", "session-expired",
                            "your session with the service has expired; sign in again and retry the request")
    raise ValueError(f"{injection.kind} does not block a call")


def _pick(injection: Injection, count: int) -> int:
    digest = hashlib.blake2b(f"{injection.rule}|{injection.call}|{injection.draw}|target".encode(),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def _members(value: Any, pointer: str = "") -> list[tuple[str, Any, str]]:
    """(pointer of the container, the container, member key) of every object member, breadth first."""
    found: list[tuple[str, Any, str]] = []
    queue = [(pointer, value)]
    while queue and len(found) < MAX_CORRUPT_PATHS:
        path, node = queue.pop(0)
        if isinstance(node, dict):
            for key, child in node.items():
                found.append((path, node, key))
                queue.append((f"{path}/{_escape(key)}", child))
        elif isinstance(node, list):
            queue.extend((f"{path}/{index}", child) for index, child in enumerate(node))
    return found


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _truncate(value: Any) -> tuple[Any, str] | None:
    """The first (breadth first) list or string of two or more items cut to half, and its pointer."""
    queue: list[tuple[str, Any, Any, Any]] = [("", value, None, None)]
    while queue:
        path, node, parent, key = queue.pop(0)
        if isinstance(node, (list, str)) and len(node) >= 2:
            cut = node[: len(node) // 2]
            if parent is None:
                return cut, path
            parent[key] = cut
            return value, path
        if isinstance(node, dict):
            queue.extend((f"{path}/{_escape(k)}", child, node, k) for k, child in node.items())
        elif isinstance(node, list):
            queue.extend((f"{path}/{i}", child, node, i) for i, child in enumerate(node))
    return None


def corrupt(value: Any, injection: Injection) -> tuple[Any, dict[str, Any]]:
    """A damaged copy of a result and what was done (`{mode, pointer}`), chosen by the injection's draw.

    `drop_field` removes one object member, `null_field` sets one to null, `truncate` cuts the first list or
    string of the result to half; a result with nothing of that shape is replaced by null.
    """
    mode = str(injection.params.get("mode", "drop_field"))
    damaged = copy.deepcopy(value)
    if mode == "truncate":
        cut = _truncate(damaged)
        if cut is not None:
            return cut[0], {"mode": mode, "pointer": cut[1]}
    else:
        members = _members(damaged)
        if members:
            path, container, key = members[_pick(injection, len(members))]
            if mode == "null_field":
                container[key] = None
            else:
                del container[key]
            return damaged, {"mode": mode, "pointer": f"{path}/{_escape(key)}"}
    return None, {"mode": mode, "pointer": "", "replaced": "null"}


def corrupt_text(text: str, injection: Injection) -> tuple[str, dict[str, Any]]:
    """A damaged copy of a result rendered as text: JSON is corrupted as a value, other text is cut to half."""
    try:
        value = json.loads(text)
    except ValueError:
        return text[: len(text) // 2], {"mode": "truncate", "pointer": ""}
    damaged, what = corrupt(value, injection)
    return json.dumps(damaged), what


def with_notice(value: Any, text: str) -> Any:
    """A result carrying a constraint notice: an object gets a `_notice` member, anything else is wrapped."""
    if isinstance(value, dict):
        return {**value, NOTICE_KEY: text}
    return {"result": value, NOTICE_KEY: text}


def notice_text(text: str) -> str:
    """How a notice reads when it is attached to a text result."""
    return f"\n\nNotice from the user: {text}"


def wait_seconds(injection: Injection) -> float:
    """How long the caller waits before the call goes on: a `delay`, or a `timeout` that really waits (else 0)."""
    if injection.kind == "delay" or (injection.kind == "timeout" and injection.params.get("wait")):
        return min(float(injection.params.get("seconds", 0)), MAX_DELAY_SECONDS)
    return 0.0


def constraint_item(injection: Injection, existing: int) -> dict[str, Any]:
    """The checklist item a `constraint` adds (`constraint-<n>`) or replaces (`replaces`), as it is recorded.

    Args:
        injection: the constraint injection.
        existing: how many constraint items the task already has.
    """
    replaces = injection.params.get("replaces")
    return {"id": str(replaces or f"constraint-{existing + 1}"), "description": str(injection.params["text"]),
            "rule": injection.rule, "call": injection.call, "replaces": replaces}
