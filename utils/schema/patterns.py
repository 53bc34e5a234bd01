"""`pattern` and `patternProperties` without catastrophic backtracking, for every Python-side schema check.

A toolkit's regular expressions are untrusted: `^(a+)+$` against 30 `a`s and a `!` takes Python's `re`
minutes. Every regex of a schema is therefore matched by jsonschema-rs's engine (Rust `regex`, linear time;
`fancy-regex` with a backtracking step limit for look-arounds and back-references), the engine that already
decides validity, so an explanation never disagrees with the verdict. A pattern jsonschema-rs cannot compile
(Python-only syntax such as `\\Z`) runs on the `regex` module with a time limit, and a search that times out
counts as no match (fail closed: the value is refused, not accepted).

`SafeValidator` is jsonschema's Draft 2020-12 validator with the keywords that search regexes
(`pattern`, `patternProperties`, `additionalProperties`, `unevaluatedProperties`) going through `search`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema_rs
import regex
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

FALLBACK_TIMEOUT_S = 0.05
"""Most seconds one search may take on the fallback engine (patterns jsonschema-rs cannot compile)."""
_CACHED_PATTERNS = 4096
_RS_ERRORS = (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError)


@functools.lru_cache(maxsize=_CACHED_PATTERNS)
def _matcher(pattern: str) -> Callable[[str], bool]:
    """A search function for `pattern`: jsonschema-rs's engine, else `regex` with a time limit."""
    try:
        compiled = jsonschema_rs.validator_for({"pattern": pattern})
    except _RS_ERRORS:
        return functools.partial(_fallback_search, regex.compile(pattern))
    return lambda text: bool(compiled.is_valid(text))


def _fallback_search(compiled: Any, text: str) -> bool:
    try:
        return compiled.search(text, timeout=FALLBACK_TIMEOUT_S) is not None
    except TimeoutError:
        return False


def search(pattern: str, text: str) -> bool:
    """True when `pattern` (ECMA-262, as JSON Schema reads it) matches somewhere in `text`, in bounded time.

    Raises:
        regex.error: `pattern` is a regular expression neither engine compiles.
    """
    return _matcher(pattern)(text)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _matched(schema: Any, name: str) -> bool:
    return isinstance(schema, dict) and any(search(p, name) for p in schema.get("patternProperties", {}))


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    extras = [name for name in instance if name not in declared and not _matched(schema, name)]
    if validator.is_type(additional, "object"):
        for name in extras:
            yield from validator.descend(instance[name], additional, path=name)
    elif additional is False and extras:
        listed = ", ".join(repr(name) for name in sorted(extras))
        yield ValidationError(f"Additional properties are not allowed ({listed} {'was' if len(extras) == 1 else 'were'}"
                              " unexpected)")


_UNEVALUATED = Draft202012Validator.VALIDATORS["unevaluatedProperties"]


def _unevaluated_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's own check where no regex can be involved; else a coarse verdict that searches no regex.

    jsonschema finds the evaluated names with `re.search` over every `patternProperties` in reach (through
    `$ref` too), so where one may be in reach the names not declared in `properties` are reported instead.
    """
    if not validator.is_type(instance, "object"):
        return
    text = json.dumps(schema, default=str)
    if "patternProperties" not in text and "$ref" not in text and "$dynamicRef" not in text:
        yield from _UNEVALUATED(validator, value, instance, schema)
        return
    extras = sorted(name for name in instance if name not in schema.get("properties", {}))
    if extras and value is False:
        yield ValidationError(f"Unevaluated properties are not allowed ({', '.join(map(repr, extras))} unexpected)")


SafeValidator = validators.extend(Draft202012Validator, {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
})
"""Draft 2020-12 with every regex search in bounded time (see the module docstring)."""
