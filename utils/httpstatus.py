"""HTTP status classes, one definition for the server, the client and the benchmarks: a success is any 2xx (a
create answers 201, a delete 204), never `== 200`."""

from __future__ import annotations

from typing import Any


def is_success(status: Any) -> bool:
    """Whether `status` is a 2xx status code (an int; anything else is not a success)."""
    return isinstance(status, int) and not isinstance(status, bool) and 200 <= status < 300


__all__ = ["is_success"]
