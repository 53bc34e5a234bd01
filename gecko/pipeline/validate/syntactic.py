"""Syntactic validation (rules): every JSON Schema 2020-12 violation, each with a pointer and a sentence.

The sentences say which argument, what is wrong and what is allowed — never the correct value.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError

from gecko.toolkits.model import Operation
from utils.jsonutil import json_pointer
from utils.schema.formats import FORMAT_HINTS

MAX_ERRORS = 50
EXPLAIN_BUDGET_S = 0.05
"""Most seconds spent explaining one invalid call; past it the violations found so far are reported (every regex
runs in bounded time, see utils.schema.patterns, but a schema can have many)."""
TYPE_NAMES = {
    "object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
    "number": "a number", "boolean": "a boolean (true/false)", "null": "null",
}


@dataclass(frozen=True)
class Violation:
    """One violation: RFC 6901 pointer into the arguments, the failing keyword, a readable message."""

    pointer: str
    keyword: str
    message: str

    def public(self) -> dict[str, str]:
        return {"pointer": self.pointer, "keyword": self.keyword, "message": self.message}


def _label(parts: list[Any]) -> str:
    if not parts:
        return "the arguments"
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return f"argument '{text}'"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _types(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join(TYPE_NAMES.get(n, str(n)) for n in names)


def _choices(values: list[Any], limit: int = 20) -> str:
    shown = ", ".join(repr(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
                      for v in values[:limit])
    return shown + (f", … ({len(values) - limit} more)" if len(values) > limit else "")


Message = Callable[[str, Any, ValidationError], str]
"""(label of the failing argument, the keyword's value in the schema, the error) → the violation's sentence."""


def _type_message(label: str, value: Any, error: ValidationError) -> str:
    kind = _kind(error.instance)
    return f"{label} must be {_types(value)}, not {TYPE_NAMES.get(kind, kind)}."


def _one_of_message(label: str, value: Any, error: ValidationError) -> str:
    return (f"{label} must match exactly one of {len(value)} allowed shapes; it matches "
            f"{'none' if not _matches_any(error) else 'more than one'}.{_branch_hint(error)}")


def _other(label: str, value: Any, error: ValidationError) -> str:
    return f"{label}: {error.message}."


_MESSAGES: dict[str, Message] = {
    "type": _type_message,
    "enum": lambda label, value, error: f"{label} must be one of: {_choices(list(value))}.",
    "const": lambda label, value, error: f"{label} must be exactly {value!r}.",
    "minimum": lambda label, value, error: f"{label} must be ≥ {value}.",
    "maximum": lambda label, value, error: f"{label} must be ≤ {value}.",
    "exclusiveMinimum": lambda label, value, error: f"{label} must be > {value}.",
    "exclusiveMaximum": lambda label, value, error: f"{label} must be < {value}.",
    "multipleOf": lambda label, value, error: f"{label} must be a multiple of {value}.",
    "minLength": lambda label, value, error: f"{label} must have at least {value} characters.",
    "maxLength": lambda label, value, error: f"{label} must have at most {value} characters.",
    "pattern": lambda label, value, error: f"{label} must match the regular expression {value}.",
    "format": lambda label, value, error: f"{label} must be {FORMAT_HINTS.get(value, f'in {value} format')}.",
    "minItems": lambda label, value, error: f"{label} must have at least {value} items.",
    "maxItems": lambda label, value, error: f"{label} must have at most {value} items.",
    "uniqueItems": lambda label, value, error: f"{label} must not contain duplicate items.",
    "minProperties": lambda label, value, error: f"{label} must have at least {value} properties.",
    "maxProperties": lambda label, value, error: f"{label} must have at most {value} properties.",
    "oneOf": _one_of_message,
    "anyOf": lambda label, value, error: (f"{label} must match at least one of {len(value)} allowed shapes."
                                          f"{_branch_hint(error)}"),
    "allOf": lambda label, value, error: f"{label} must satisfy all of its constraints.",
    "not": lambda label, value, error: f"{label} has a value that is not allowed here.",
    "dependentRequired": _other,
    "contains": lambda label, value, error: f"{label} must contain at least one matching item.",
    "propertyNames": lambda label, value, error: f"{label} has a property name that is not allowed.",
    "false": lambda label, value, error: f"{label} is not accepted.",
}
"""The sentence of each keyword's violation (built once, not per error)."""


def _violations(error: ValidationError, tool: str) -> list[Violation]:
    path = list(error.absolute_path)
    label = _label(path)
    keyword = str(error.validator)
    # The stubs allow "unset" for errors built by hand; an error a validator yields always has both.
    value: Any = error.validator_value
    instance: Any = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    if keyword == "required":
        missing = [name for name in value if isinstance(instance, dict) and name not in instance]
        where = "" if not path else f" in {label}"
        return [Violation(json_pointer([*path, name]), "required", f"Missing required argument '{name}'{where}.")
                for name in missing]
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(k for k in (instance or {}) if k not in schema.get("properties", {}))
        hint = f" Allowed arguments: {', '.join(allowed)}." if allowed else " No other arguments are accepted."
        where = f"tool {tool}" if not path else label
        return [Violation(json_pointer([*path, name]), keyword, f"Unknown argument '{name}' is not accepted by {where}.{hint}")
                for name in extra] or [Violation(json_pointer(path), keyword, f"{label} has unexpected properties.")]
    text = _MESSAGES.get(keyword, _other)(label, value, error)
    return [Violation(json_pointer(path), keyword, text[0].upper() + text[1:])]


def _matches_any(error: ValidationError) -> bool:
    failing = {e.schema_path[0] for e in error.context if e.schema_path}
    branches: Any = error.validator_value  # set on every error a validator yields (see _violations)
    return len(failing) < len(branches)


def _branch_hint(error: ValidationError) -> str:
    best = min(error.context, key=lambda e: len(list(e.absolute_path)) * -1, default=None)
    if best is None:
        return ""
    return f" Closest problem: {best.message}."


def validate_arguments(operation: Operation, arguments: Any) -> list[Violation]:
    """All violations of `arguments` against the operation's argument schema (empty list = valid), at most
    `MAX_ERRORS`, found within `EXPLAIN_BUDGET_S`; the cost grows with the invalid parts of `arguments`, not with
    its size."""
    check = operation.args_check
    if check is not None and check.is_valid(arguments):
        return []
    deadline = time.monotonic() + EXPLAIN_BUDGET_S
    errors = check.iter_errors(arguments) if check is not None else operation.args_validator.iter_errors(arguments)
    found: dict[tuple[str, str, str], tuple[list[str], Violation]] = {}
    for error in errors:
        path = list(map(str, error.absolute_path))
        # jsonschema reports `required` once per missing name, each error carrying the whole list: keep one each
        for violation in _violations(error, operation.operation_id):
            found.setdefault((violation.pointer, violation.keyword, violation.message), (path, violation))
        if len(found) >= MAX_ERRORS or time.monotonic() > deadline:
            break
    ordered = sorted(found.values(), key=lambda item: item[0])
    return [violation for _, violation in ordered][:MAX_ERRORS]

