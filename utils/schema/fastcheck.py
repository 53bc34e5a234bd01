"""Fast schema checks with jsonschema-rs; the Python validator explains the failures, in bounded time.

The hot path only needs "is this valid?". jsonschema-rs answers in microseconds; when it cannot
compile a schema (an exotic regex, say) the Python validator answers instead. Compiled lazily, on the
first call of each operation, so start-up stays fast for thousands of toolkits.

Explaining a failure needs the Python validator (its errors carry the keyword, the value and the
sub-schema our messages are made of), which costs microseconds per value: 10,000 valid array items
with one bad one took ~0.4 s. `iter_errors` therefore runs a Python validator whose keywords that
descend into children (`properties`, `items`, `oneOf`, …) first ask jsonschema-rs about each child
and skip the ones it accepts, so the Python work is proportional to the invalid parts only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema_rs
from jsonschema import validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

log = logging.getLogger(__name__)
_RS_ERRORS = (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError)
_DESCENDING = ("properties", "patternProperties", "additionalProperties", "items", "prefixItems",
               "allOf", "anyOf", "oneOf", "dependentSchemas", "then", "else")
"""Keywords whose children (or branches) are checked with `descend`: those may skip valid children."""


def _compile(schema: Any) -> Any:
    """A jsonschema-rs validator for `schema`, or None when it cannot compile it."""
    try:
        return jsonschema_rs.validator_for(schema, validate_formats=True)
    except _RS_ERRORS as exc:
        log.debug("jsonschema-rs cannot compile a schema (%s); using the Python validator", exc)
        return None


class FastCheck:
    """`is_valid` through jsonschema-rs when it can compile the schema, else through `fallback`;
    `iter_errors` through `fallback`'s rules, skipping what jsonschema-rs accepts."""

    def __init__(self, schema: Any, fallback: Validator) -> None:
        self._schema = schema
        self._fallback = fallback
        self._compiled: Any = None
        self._tried = False
        self._explainer: Validator | None = None
        self._parts: dict[int, tuple[Any, Any]] = {}
        """id(sub-schema) → (sub-schema, its jsonschema-rs validator or None); the schema is kept so its id stays its own."""

    def __reduce__(self) -> tuple[Any, tuple[Any, Validator]]:
        """Pickled as what it is built from (the compiled parts are rebuilt lazily, as they were first)."""
        return FastCheck, (self._schema, self._fallback)

    def is_valid(self, instance: Any) -> bool:
        if not self._tried:
            self._tried = True
            self._compiled = _compile(self._schema)
        if self._compiled is not None:
            try:
                return bool(self._compiled.is_valid(instance))
            except (ValueError, TypeError, OverflowError):
                pass  # e.g. integers beyond 64 bits
        return bool(self._fallback.is_valid(instance))

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]:
        """The Python validator's errors for `instance`, lazily; children jsonschema-rs accepts are not visited.

        If that finds nothing (jsonschema-rs and the Python validator disagree on a child), the plain Python
        validator's errors follow, so an invalid instance is never explained as valid.
        """
        if self._explainer is None:
            self._explainer = self._skipping_validator()
        found = False
        for error in self._explainer.iter_errors(instance):
            found = True
            yield error
        if not found:
            yield from self._fallback.iter_errors(instance)

    def _skipping_validator(self) -> Validator:
        accepts = self._accepts
        keywords = {name: _skipping(function, accepts) for name, function in self._fallback.VALIDATORS.items()
                    if name in _DESCENDING}
        cls = validators.extend(type(self._fallback), keywords)
        # every jsonschema validator class has `format_checker`; the `Validator` protocol does not declare it
        return cls(self._fallback.schema, format_checker=getattr(self._fallback, "format_checker", None))

    def _accepts(self, schema: Any, instance: Any) -> bool:
        """True when jsonschema-rs says `instance` fits the sub-schema `schema` (False when it cannot tell)."""
        if schema is True:
            return True
        if not isinstance(schema, dict):
            return False
        entry = self._parts.get(id(schema))
        if entry is None:
            defs = self._schema.get("$defs") if isinstance(self._schema, dict) else None
            standalone = {**schema, "$defs": defs} if defs and "$defs" not in schema else schema
            entry = self._parts[id(schema)] = (schema, _compile(standalone))
        compiled = entry[1]
        if compiled is None:
            return False
        try:
            return bool(compiled.is_valid(instance))
        except (ValueError, TypeError, OverflowError):
            return False


Keyword = Callable[[Any, Any, Any, Any], Iterator[ValidationError]]


def _skipping(keyword: Keyword, accepts: Callable[[Any, Any], bool]) -> Keyword:
    """`keyword` with a validator whose `descend` skips children that `accepts` says are valid."""

    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        return keyword(_SkipValid(validator, accepts), value, instance, schema)

    return run


class _SkipValid:
    """A validator proxy: `descend` yields nothing for a child jsonschema-rs accepts; all else is the validator's."""

    def __init__(self, validator: Any, accepts: Callable[[Any, Any], bool]) -> None:
        self._validator = validator
        self._accepts = accepts

    def __getattr__(self, name: str) -> Any:
        return getattr(self._validator, name)

    def descend(self, instance: Any, schema: Any, *args: Any, **kwargs: Any) -> Iterator[ValidationError]:
        if self._accepts(schema, instance):
            return iter(())
        return self._validator.descend(instance, schema, *args, **kwargs)
