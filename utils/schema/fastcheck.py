"""Fast yes/no schema checks with jsonschema-rs; the Python validator explains the failures.

The hot path only needs "is this valid?". jsonschema-rs answers in microseconds; when it cannot
compile a schema (an exotic regex, say) the Python validator answers instead. Compiled lazily, on the
first call of each operation, so start-up stays fast for thousands of toolkits.
"""

from __future__ import annotations

import logging
from typing import Any

import jsonschema_rs
from jsonschema.protocols import Validator

log = logging.getLogger(__name__)


class FastCheck:
    """`is_valid` through jsonschema-rs when it can compile the schema, else through `fallback`."""

    def __init__(self, schema: Any, fallback: Validator) -> None:
        self._schema = schema
        self._fallback = fallback
        self._compiled: Any = None
        self._tried = False

    def is_valid(self, instance: Any) -> bool:
        if not self._tried:
            self._tried = True
            try:
                self._compiled = jsonschema_rs.validator_for(self._schema, validate_formats=True)
            except (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError) as exc:
                log.debug("jsonschema-rs cannot compile a schema (%s); using the Python validator", exc)
        if self._compiled is not None:
            try:
                return bool(self._compiled.is_valid(instance))
            except (ValueError, TypeError, OverflowError):
                pass  # e.g. integers beyond 64 bits
        return bool(self._fallback.is_valid(instance))
