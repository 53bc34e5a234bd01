"""JSON Schema's scalar types for pydantic models at the API boundary.

Pydantic's lax mode reads `true` and `"3"` as the integer 1 and 3, and `1` or `"yes"` as `true`; the JSON Schema
these models publish says `integer`, `number` and `boolean`. With these types a body is accepted exactly when it
fits the published schema: `3.0` is an integer (as in JSON Schema), `true` and `"3"` are not.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Strict, StrictBool

__all__ = ["NUMBER_ONLY", "JsonBool", "JsonFloat", "JsonInt"]


def _number_only(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not a boolean")
    if isinstance(value, (str, bytes)):
        raise ValueError("must be a number, not a string")
    return value


NUMBER_ONLY = BeforeValidator(_number_only)
"""Refuses booleans and strings before pydantic's lax number parsing. Constraints go before it,
`Annotated[int, Field(ge=1), NUMBER_ONLY]`: after it, pydantic publishes them as unknown keywords (`ge`, not
`minimum`) in the JSON Schema."""
JsonInt = Annotated[int, NUMBER_ONLY]
"""An integer: `3` or `3.0`; never `true`, `"3"` or `3.5`."""
JsonFloat = Annotated[float, Strict()]
"""A number: `3` or `3.5`; never `true` or `"3.5"`."""
JsonBool = StrictBool
"""`true` or `false` only."""
