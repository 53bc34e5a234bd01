"""JSON responses rendered with orjson (the hot path renders one per tool call)."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import JSONResponse


class FastJSONResponse(JSONResponse):
    """`JSONResponse` with the same compact UTF-8 output, rendered by orjson.

    Values orjson refuses (integers beyond 64 bits, non-string keys) fall back to the standard encoder.
    """

    def render(self, content: Any) -> bytes:
        try:
            return orjson.dumps(content)
        except (TypeError, orjson.JSONEncodeError):
            return super().render(content)
