"""Safe parsing of function-call text (`[f(a=1), mod.g('x')]`) into literal values, and formatting back.

Model text and ground-truth call strings are parsed with `ast.parse` and walked node by node. Only these
nodes are accepted; anything else is rejected before any value is built, and nothing is ever evaluated:

- the top level: one call, or a list/tuple of calls (`[]` is "no call");
- a callee: a name or a dotted chain of names (`math.factorial`); no attribute access on anything else;
- argument values: str/int/float/bool/None constants, `-`/`+` on a number, lists, tuples, and dicts with
  constant keys. No names, calls, operators, comprehensions, f-strings, sets, bytes, `*`/`**` unpacking.

Positional arguments are mapped to parameter names in the order of the function doc's `properties`
(the official prompt decoder drops them instead; our exported text is always keyword-only, so both agree).

Text is normalised as the official prompt decoder does (strip backticks, newlines and spaces, add missing
`[` `]`, strip wrapping single quotes), so a string that `bfcl evaluate` decodes parses the same here.
"""

from __future__ import annotations

import ast
import keyword
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_SOURCE_CHARS = 200_000
"""Longer inputs are rejected before `ast.parse` sees them."""
MAX_VALUE_DEPTH = 32
"""Deepest nesting of lists/dicts/tuples accepted in an argument value."""
MAX_CALLS = 256
"""Most calls accepted in one piece of text."""


class CallParseError(ValueError):
    """Text could not be turned into function calls."""


class NotACallError(CallParseError):
    """The text is not a call expression at all (prose, a syntax error, a bare value): the model made no call."""


class BadCallError(CallParseError):
    """The text is shaped like calls but was refused (non-literal or unsafe parts, unmappable arguments, size)."""


@dataclass(frozen=True)
class FunctionCall:
    """One call: a (possibly dotted) function name and keyword arguments with plain Python values."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def _normalise(text: str) -> str:
    cleaned = text.strip("`\n ")
    if not cleaned.startswith("["):
        cleaned = "[" + cleaned
    if not cleaned.endswith("]"):
        cleaned = cleaned + "]"
    return cleaned.strip().strip("'")


def _callee_name(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise BadCallError("a callee must be a name or a dotted name (no attribute access on other values)")
    parts.append(node.id)
    return ".".join(reversed(parts))


def _number(node: ast.expr) -> int | float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    return None


def _literal(node: ast.expr, depth: int = 0) -> Any:
    if depth > MAX_VALUE_DEPTH:
        raise BadCallError(f"argument values nest deeper than {MAX_VALUE_DEPTH} levels")
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or type(value) in (str, bool, int):
            return value
        if type(value) is float and math.isfinite(value):
            return value
        raise BadCallError(f"unsupported constant {type(value).__name__} {value!r:.40}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        number = _number(node.operand)
        if number is None:
            raise BadCallError("a sign may only prefix a number")
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.List):
        return [_literal(item, depth + 1) for item in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(item, depth + 1) for item in node.elts)
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:
                raise BadCallError("dict unpacking (**) is not allowed in argument values")
            key_value = _literal(key, depth + 1)
            if isinstance(key_value, (list, tuple)):
                raise BadCallError("dict keys must be constants")
            result[key_value] = _literal(item, depth + 1)
        return result
    raise BadCallError(f"argument values must be literals, got {type(node).__name__}")


def _parameter_order(functions: Sequence[Mapping[str, Any]] | None, name: str) -> list[str] | None:
    for doc in functions or ():
        if doc.get("name") == name:
            return list(doc.get("parameters", {}).get("properties", {}))
    return None


def _call(node: ast.expr, functions: Sequence[Mapping[str, Any]] | None) -> FunctionCall:
    if not isinstance(node, ast.Call):
        raise BadCallError(f"expected a call, got {type(node).__name__}")
    name = _callee_name(node.func)
    arguments: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise BadCallError("keyword unpacking (**) is not allowed")
        arguments[kw.arg] = _literal(kw.value)
    if node.args:
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            raise BadCallError("argument unpacking (*) is not allowed")
        order = _parameter_order(functions, name)
        if order is None:
            raise BadCallError(f"positional arguments to {name!r}, which has no function doc to name them")
        if len(node.args) > len(order):
            raise BadCallError(
                f"{name!r} takes at most {len(order)} arguments, got {len(node.args)} positional"
            )
        positional = {param: _literal(arg) for param, arg in zip(order, node.args, strict=False)}
        clash = sorted(positional.keys() & arguments.keys())
        if clash:
            raise BadCallError(f"{name!r} got multiple values for {', '.join(clash)}")
        arguments = {**positional, **arguments}
    return FunctionCall(name=name, arguments=arguments)


def parse_calls(text: str, functions: Sequence[Mapping[str, Any]] | None = None) -> list[FunctionCall]:
    """Parse call text into calls with literal arguments, never evaluating it.

    Args:
        text: Model output or a ground-truth string: `f(a=1)`, `[f(a=1), g(b='x')]`, `sort('a.pdf')`.
        functions: Function docs used to name positional arguments (in `properties` order).

    Returns:
        The calls in order; `[]` when the text is an empty list.

    Raises:
        NotACallError: The text is not a call expression (prose, invalid syntax, a bare value).
        BadCallError: The text looks like calls but contains anything beyond names and literals,
            is too large or too deep, or has positional arguments that cannot be named.
    """
    if not isinstance(text, str):
        raise NotACallError(f"expected text, got {type(text).__name__}")
    if len(text) > MAX_SOURCE_CHARS:
        raise BadCallError(f"input of {len(text)} characters exceeds the {MAX_SOURCE_CHARS} limit")
    try:
        tree = ast.parse(_normalise(text), mode="eval")
    except (SyntaxError, ValueError) as exc:
        raise NotACallError(f"not a call expression: {exc}") from None
    except (RecursionError, MemoryError) as exc:
        raise BadCallError(f"input too complex to parse: {type(exc).__name__}") from None
    body = tree.body
    if isinstance(body, ast.Call):
        nodes: list[ast.expr] = [body]
    elif isinstance(body, (ast.List, ast.Tuple)):
        nodes = list(body.elts)
        if not all(isinstance(node, ast.Call) for node in nodes):
            if any(isinstance(node, ast.Call) for node in nodes):
                raise BadCallError("a call list may only contain calls")
            raise NotACallError("a list without calls")
    else:
        raise NotACallError(f"not a call expression ({type(body).__name__})")
    if len(nodes) > MAX_CALLS:
        raise BadCallError(f"{len(nodes)} calls exceed the {MAX_CALLS} limit")
    try:
        return [_call(node, functions) for node in nodes]
    except RecursionError:
        raise BadCallError("argument values too deeply nested") from None


def _render(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"cannot format non-finite float {value!r} as a literal")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_render(k)}: {_render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_render(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if value is None or isinstance(value, (str, bool, int, float)):
        return repr(value)
    raise ValueError(f"cannot format a {type(value).__name__} as a literal")


def format_call(call: FunctionCall) -> str:
    """Render one call with keyword arguments only: `name(a=1, b='x')`.

    Raises:
        ValueError: An argument name is not a Python identifier, or a value is not a plain literal
            (or is a non-finite float).
    """
    for key in call.arguments:
        if not isinstance(key, str) or not key.isidentifier() or keyword.iskeyword(key):
            raise ValueError(
                f"argument name {key!r} of {call.name!r} cannot be written as a keyword argument"
            )
    arguments = ", ".join(f"{key}={_render(value)}" for key, value in call.arguments.items())
    return f"{call.name}({arguments})"


def format_calls(calls: Sequence[FunctionCall]) -> str:
    """Render calls in the official prompt-model format: `[f(a=1), g(b='x')]` (`[]` for no call)."""
    return "[" + ", ".join(format_call(call) for call in calls) + "]"


def calls_to_dicts(calls: Sequence[FunctionCall]) -> list[dict[str, dict[str, Any]]]:
    """The decoded form the official AST checker takes: `[{name: {arg: value}}, ...]`."""
    return [{call.name: dict(call.arguments)} for call in calls]
