"""The `calculate` tool: Python's arithmetic and error texts (as tau2's eval gives them), without eval."""

from __future__ import annotations

import pytest

from benchmarks.taubench.arithmetic import calculate_expression


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("2 + 2", "4.0"),
        ("  1+1", "2.0"),
        ("10/3", "3.33"),
        ("2**0.5", "1.41"),
        ("2 ** 3 ** 2", "512.0"),
        ("3 * (4 + 5) / 2", "13.5"),
        (".5", "0.5"),
        ("5.", "5.0"),
        ("-.5*-2", "1.0"),
        ("7//2", "3.0"),
        ("100-99.995", "0.0"),
        ("0.1+0.2", "0.3"),
        ("+-+1", "-1.0"),
        ("(1)", "1.0"),
    ],
)
def test_results(expression: str, result: str) -> None:
    assert calculate_expression(expression) == result


@pytest.mark.parametrize(
    ("expression", "error", "message"),
    [
        ("", SyntaxError, "invalid syntax (<string>, line 0)"),
        ("1..2", SyntaxError, "invalid syntax (<string>, line 1)"),
        ("*1", SyntaxError, "invalid syntax (<string>, line 1)"),
        ("((1)", SyntaxError, "'(' was never closed (<string>, line 1)"),
        ("(1 2)", SyntaxError, "invalid syntax. Perhaps you forgot a comma? (<string>, line 1)"),
        ("01", SyntaxError, "leading zeros in decimal integer literals are not permitted; "
                            "use an 0o prefix for octal integers (<string>, line 1)"),
        ("1/0", ZeroDivisionError, "division by zero"),
        ("1.0/0", ZeroDivisionError, "float division by zero"),
        ("2//0", ZeroDivisionError, "integer division or modulo by zero"),
        ("0**-1", ZeroDivisionError, "0.0 cannot be raised to a negative power"),
        ("(-8)**0.5", TypeError, "float() argument must be a string or a real number, not 'complex'"),
        ("()", TypeError, "float() argument must be a string or a real number, not 'tuple'"),
        ("...", TypeError, "float() argument must be a string or a real number, not 'ellipsis'"),
        ("2(3)", TypeError, "'int' object is not callable"),
        ("()()", TypeError, "'tuple' object is not callable"),
        ("(1)(2)(1/0)", TypeError, "'int' object is not callable"),
        ("-()", TypeError, "bad operand type for unary -: 'tuple'"),
        ("1e5", ValueError, "Invalid characters in expression"),
        ("__import__('os')", ValueError, "Invalid characters in expression"),
        ([], TypeError, "eval() arg 1 must be a string, bytes or code object"),
        (["1", "+"], TypeError, "eval() arg 1 must be a string, bytes or code object"),
        (5, TypeError, "'int' object is not iterable"),
        ([5], TypeError, "'in <string>' requires string as left operand, not int"),
    ],
)
def test_errors(expression: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        calculate_expression(expression)
    assert str(caught.value) == message


def test_huge_powers_fail_fast() -> None:
    with pytest.raises(OverflowError, match="int too large to convert to float"):
        calculate_expression("9**9**9")
