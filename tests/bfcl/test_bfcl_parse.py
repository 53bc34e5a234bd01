"""Safe call parsing: literals only, positional arguments named from docs, refusal of anything executable."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from benchmarks.bfcl.parse import (
    MAX_SOURCE_CHARS,
    BadCallError,
    FunctionCall,
    NotACallError,
    calls_to_dicts,
    format_call,
    format_calls,
    parse_calls,
)

SORT_DOC = {
    "name": "sort",
    "description": "Sort a file.",
    "parameters": {
        "type": "dict",
        "properties": {"file_name": {"type": "string"}},
        "required": ["file_name"],
    },
}
TWO_PARAM_DOC = {
    "name": "mv",
    "description": "Move.",
    "parameters": {
        "type": "dict",
        "properties": {"source": {"type": "string"}, "destination": {"type": "string"}},
        "required": ["source", "destination"],
    },
}


@pytest.fixture(autouse=True)
def no_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any use of eval or exec during parsing would fail the test loudly (ast.parse itself uses compile)."""

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the parser must never evaluate")

    for name in ("eval", "exec"):
        monkeypatch.setattr(builtins, name, forbidden)


def test_keyword_call() -> None:
    assert parse_calls("cd(folder='document')") == [FunctionCall("cd", {"folder": "document"})]


def test_list_of_calls_with_all_literal_kinds() -> None:
    text = "[f(a=1, b=-2.5, c=True, d=None, e=[1, 'x'], g={'k': (1, 2)}, h=+3), g()]"
    calls = parse_calls(text)
    assert calls[0].arguments == {
        "a": 1,
        "b": -2.5,
        "c": True,
        "d": None,
        "e": [1, "x"],
        "g": {"k": (1, 2)},
        "h": 3,
    }
    assert calls[1] == FunctionCall("g", {})


def test_dotted_names() -> None:
    assert parse_calls("[math.factorial(number=5)]")[0].name == "math.factorial"
    assert parse_calls("a.b.c(x=1)")[0].name == "a.b.c"


def test_positional_arguments_are_named_from_docs() -> None:
    assert parse_calls("sort('final_report.pdf')", [SORT_DOC]) == [
        FunctionCall("sort", {"file_name": "final_report.pdf"})
    ]
    assert parse_calls("mv('a', destination='b')", [TWO_PARAM_DOC])[0].arguments == {
        "source": "a",
        "destination": "b",
    }


def test_positional_arguments_without_a_doc_are_refused() -> None:
    with pytest.raises(BadCallError, match="no function doc"):
        parse_calls("sort('x')")


def test_too_many_positional_arguments_are_refused() -> None:
    with pytest.raises(BadCallError, match="at most 1"):
        parse_calls("sort('a', 'b')", [SORT_DOC])


def test_positional_and_keyword_clash() -> None:
    with pytest.raises(BadCallError, match="multiple values"):
        parse_calls("sort('a', file_name='b')", [SORT_DOC])


def test_official_normalisation() -> None:
    assert parse_calls("```\n[f(a=1)]\n```") == [FunctionCall("f", {"a": 1})]
    assert parse_calls("f(a=1), g(b=2)") == [FunctionCall("f", {"a": 1}), FunctionCall("g", {"b": 2})]
    assert parse_calls("[]") == []


@pytest.mark.parametrize(
    "text",
    ["I cannot help with that.", "The answer is 42", "42", "[1, 2]", "f(a=", "''", "x = 1"],
)
def test_not_a_call(text: str) -> None:
    with pytest.raises(NotACallError):
        parse_calls(text)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch /tmp/gecko_pwned')",
        "[f(x=__import__('os').system('touch /tmp/gecko_pwned'))]",
        "f(x=open('/etc/passwd').read())",
        "os.path.join.__globals__(x=1).y()",
        "f(x=().__class__.__bases__)",
        "f(x=[c for c in ().__class__.__base__.__subclasses__()])",
        "f(x=lambda: 1)",
        "f(x=1 + 1)",
        "f(x=2 ** 1000000)",
        "f(x=a)",
        "f(x=a.b)",
        "f(x=d['k'])",
        "f(x=f'{y}')",
        "f(x={1, 2})",
        "f(x=b'bytes')",
        "f(x=1j)",
        "f(x=1e999)",
        "f(x=...)",
        "f(*args)",
        "f(**{'a': 1})",
        "f(x={**d})",
        "f(x=-'a')",
        "f(x=not True)",
        "[f(a=1), 3]",
        "getattr(os, 'system')('x')",
        "f(x=g(y=1))",
    ],
)
def test_refused_without_evaluation(text: str) -> None:
    with pytest.raises(BadCallError):
        parse_calls(text)
    assert not Path("/tmp/gecko_pwned").exists()


def test_huge_input_is_refused_before_parsing() -> None:
    with pytest.raises(BadCallError, match="limit"):
        parse_calls("f(x='" + "a" * MAX_SOURCE_CHARS + "')")


def test_deep_nesting_is_refused() -> None:
    with pytest.raises((BadCallError, NotACallError)):
        parse_calls("f(x=" + "[" * 5000 + "]" * 5000 + ")")
    with pytest.raises(BadCallError, match="deeper"):
        parse_calls("f(x=" + "[" * 60 + "]" * 60 + ")")


def test_many_calls_are_refused() -> None:
    with pytest.raises(BadCallError):
        parse_calls("[" + ", ".join("f()" for _ in range(1000)) + "]")


@pytest.mark.parametrize(
    "text",
    ["f(x=" + "+".join(["1"] * 20000) + ")", "f(x=" + "-" * 100000 + "1)"],
    ids=["binop-chain", "unary-chain"],
)
def test_parser_limits_are_refusals_not_crashes(text: str) -> None:
    with pytest.raises(BadCallError):
        parse_calls(text)


def test_non_text_is_not_a_call() -> None:
    with pytest.raises(NotACallError):
        parse_calls(None)


def test_format_round_trip() -> None:
    calls = [
        FunctionCall("math.hypot", {"x": 4, "y": 5.0}),
        FunctionCall(
            "post", {"content": 'it\'s "quoted"\nline', "tags": ["#a"], "meta": {"k": (1,)}, "n": None}
        ),
    ]
    text = format_calls(calls)
    assert text.startswith("[math.hypot(x=4, y=5.0), post(content=")
    assert parse_calls(text) == calls
    assert format_calls([]) == "[]"


def test_format_refuses_unwritable_calls() -> None:
    with pytest.raises(ValueError):
        format_call(FunctionCall("f", {"from": 1}))
    with pytest.raises(ValueError):
        format_call(FunctionCall("f", {"x": float("nan")}))
    with pytest.raises(ValueError):
        format_call(FunctionCall("f", {"x": object()}))


def test_calls_to_dicts() -> None:
    calls = [FunctionCall("a.b", {"x": 1}), FunctionCall("c", {})]
    assert calls_to_dicts(calls) == [{"a.b": {"x": 1}}, {"c": {}}]
