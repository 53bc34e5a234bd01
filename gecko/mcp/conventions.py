"""A twin's errors in its real server's own convention (`x-gecko-error-convention`, written by `gecko twin learn`).

| convention | the world model's not-found | the MCP result |
|---|---|---|
| `isError` | a declared 404 | `isError: true`, the text is the server's message (`Entity with name x not found`), not a JSON body |
| `body` | a 200 error body `{"error": …}` | a success whose body carries the server's message in its error field |
| none | as declared | the body as JSON (unchanged) |

The message is the learned `not_found` template with the value of its `id_argument` (`Task not found: {id}`);
without a template, the body's own `error`/`message`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from gecko.toolkits.conventions import not_found_message
from gecko.twin.outcome import error_body

_PATH = re.compile(r"[.\[\]]+")


def _first_at(value: Any, parts: list[str]) -> Any:
    if not parts:
        return value if not isinstance(value, (dict, list)) else None
    if isinstance(value, list):
        return next((found for item in value if (found := _first_at(item, parts)) is not None), None)
    if isinstance(value, Mapping):
        return _first_at(value.get(parts[0]), parts[1:])
    return None


def error_message(convention: Mapping[str, Any], body: Any, arguments: Mapping[str, Any] | None) -> str:
    """The server's message for this error: its template filled with the id sent, else the body's message."""
    argument = convention.get("id_argument")
    if isinstance(argument, str) and arguments is not None:
        value = _first_at(arguments, [p for p in _PATH.split(argument) if p])
        message = not_found_message(convention, value) if value is not None else None
        if message is not None:
            return message
    if isinstance(body, Mapping):
        for key in ("error", "message", "detail"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def in_band_error(convention: Mapping[str, Any] | None, body: Any, arguments: Mapping[str, Any] | None) -> Any:
    """A successful body that is the tool's own error, with the server's message; other bodies unchanged."""
    if (convention is None or convention.get("kind") != "body" or not isinstance(convention.get("not_found"), str)
            or not isinstance(body, Mapping) or not error_body(body)):
        return body
    key = next((k for k in ("error", "message") if isinstance(body.get(k), str)), None)
    return body if key is None else {**body, key: error_message(convention, body, arguments)}
