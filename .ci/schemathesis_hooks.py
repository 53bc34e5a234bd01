"""Schemathesis hooks for `make fuzz` (scripts/api_fuzz.py sets SCHEMATHESIS_HOOKS to this file).

1. A fault policy has two rules that JSON Schema cannot state: rule names are unique within a policy, and a rule's
`until` is not before its `from`. Gecko refuses a policy that breaks them with a 422 naming the rule (the
document says so in the models' descriptions); schemathesis, which generates from the schema alone, would count
that 422 as a schema-valid request rejected (ST202). This hook drops exactly those failures: a 422 whose every
error is one of these two rules. Any other error in the same answer keeps the failure.

2. CPython 3.11 raises `SystemError: AST constructor recursion depth mismatch` from `ast.parse` deep in a stack
(python/cpython#106905, fixed in 3.12); hypothesis calls it to describe a lambda when schemathesis filters a
strategy in its coverage phase, which then stops with a runtime error. The description is only a repr: on that
error it becomes the function's name, and the generated cases are the same.
"""

from __future__ import annotations

import json
import re
from typing import Any

import schemathesis
from hypothesis.internal import reflection
from hypothesis.strategies._internal import lazy

CROSS_FIELD_RULES = re.compile(r"rule names must be unique|until \(\d+\) is before from \(\d+\)")


_describe = reflection.get_pretty_function_description


def _describe_without_ast_bug(f: object) -> str:
    try:
        return _describe(f)
    except SystemError:
        return getattr(f, "__name__", "<function>")


lazy.get_pretty_function_description = _describe_without_ast_bug


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every failure but a 422 for a fault policy's cross-field rules alone."""
    if getattr(failure, "code", None) != "ST202" or response.status_code != 422:
        return True
    try:
        errors = json.loads(response.content).get("errors") or []
    except (ValueError, AttributeError):
        return True
    messages = [str(error.get("message", "")) for error in errors if isinstance(error, dict)]
    return not (messages and len(messages) == len(errors) and all(CROSS_FIELD_RULES.search(m) for m in messages))
