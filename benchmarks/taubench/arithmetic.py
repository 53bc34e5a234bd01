"""The `calculate` tool's arithmetic, without `eval`.

tau2 evaluates the expression with Python itself once it has checked the characters. We compile it
the same way (so syntax errors carry Python's own message) but then walk the syntax tree and apply
Python's operators ourselves: results and error texts are the same, and nothing is executed.
"""

from __future__ import annotations

import ast
import operator
import warnings
from collections.abc import Callable
from typing import Any

ALLOWED_CHARACTERS = "0123456789+-*/(). "

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
# An integer power whose result would need more bits than this cannot be finished in reasonable
# time; Python would end with the float-conversion overflow, so we raise that at once.
_MAX_POWER_BITS = 1_000_000


def _power(base: Any, exponent: Any) -> Any:
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and abs(base) > 1
        and exponent * abs(base).bit_length() > _MAX_POWER_BITS
    ):
        raise OverflowError("int too large to convert to float")
    return operator.pow(base, exponent)


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.Tuple):
        return tuple(_value(element) for element in node.elts)
    if isinstance(node, ast.Call):
        func = _value(node.func)
        for arg in node.args:  # Python evaluates the arguments before failing the call
            _value(arg)
        if not callable(func):
            raise TypeError(f"'{type(func).__name__}' object is not callable")
        raise TypeError("calls are not supported")  # unreachable with the allowed characters
    raise ValueError(f"unsupported expression element: {type(node).__name__}")


def calculate_expression(expression: str) -> str:
    """Evaluate an arithmetic expression the way tau2's `calculate` tool does.

    Args:
        expression: digits, `+ - * / ( ) .` and spaces.

    Returns:
        `str(round(float(result), 2))`, e.g. `"4.0"` for `"2 + 2"`.

    Raises:
        ValueError: `Invalid characters in expression` for any other character.
        SyntaxError, ZeroDivisionError, TypeError, OverflowError: as Python would raise them.
    """
    if not all(char in ALLOWED_CHARACTERS for char in expression):
        raise ValueError("Invalid characters in expression")
    if not isinstance(expression, str):
        # An iterable of allowed strings (e.g. [] or ["1", "+"]) passes the check above; eval() then
        # refuses it with this message.
        raise TypeError("eval() arg 1 must be a string, bytes or code object")
    # eval() drops leading spaces and tabs of a string source; compile() then gives its exact
    # syntax errors. The code object is never run.
    source = expression.lstrip(" \t")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        compile(source, "<string>", "eval")
        tree = ast.parse(source, "<string>", mode="eval")
    return str(round(float(_value(tree)), 2))
