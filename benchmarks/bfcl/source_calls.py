"""Java and JavaScript answers (simple_java, simple_javascript): call text as `bfcl evaluate` decodes it, both ways.

An answer of these categories is one call whose arguments are *strings of source* in the language (`"42L"`,
`"new ArrayList<>(Arrays.asList(1, 2))"`, `"{a: 1}"`); Gecko's toolkits declare them as strings
(`gecko.convert.bfcl.source_language_doc`). `bfcl evaluate` reads the result text with its tree-sitter decoder
(`bfcl_eval.model_handler.parser`), and its checker converts each decoded string by the declared type
(`java_type_converter`, `js_type_converter`) before comparing it with the ground truth.

- `decode_source_calls`: the official decoder itself (tree-sitter, nothing evaluated), after the official
  normalisation of prompt-mode text, so our scores and `bfcl evaluate`'s agree by construction.
- `format_source_calls`: writes each argument so that the official decoder gives back a string the checker
  converts exactly as it converts the argument itself (what a function-calling checker, which receives the
  strings, would see). Tried in order: a string literal holding the argument (first for `String`/`char`), the
  argument as source, and, for Java, the argument inside `java.util.Objects.requireNonNull(...)`: a method call
  returns its argument, and the decoder keeps a method call's text whole where it drops the body of an
  anonymous class (`new HashMap<>() {{ put("k", 1); }}` would decode as an empty map). An argument no form
  carries is written as it is (the checker then judges what the decoder makes of it).
- `source_value`: a ground-truth value (the checker's converted form) as the source string that converts back
  to it, for the scripted oracle.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bfcl_eval.constants.type_mappings import JAVA_TYPE_CONVERSION, JS_TYPE_CONVERSION
from bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter import java_type_converter
from bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter import js_type_converter

from benchmarks.bfcl.languages import CallLanguage
from benchmarks.bfcl.loader import FunctionDoc
from benchmarks.bfcl.parse import BadCallError, CallParseError, FunctionCall, NotACallError

NESTED_TYPES = frozenset({"Array", "ArrayList", "array"})
"""Declared types whose item type the official checker passes to its converter."""
JAVA_WRAPPER = "java.util.Objects.requireNonNull"
"""Returns its argument; the official Java decoder keeps a method call's text whole."""
_DECODER_LOCK = threading.Lock()
"""The official decoders share one module-level tree-sitter parser per language: one parse at a time."""
_DOTTED_NAME = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")
_JAVA_ARRAY_ELEMENT = {"String": "String", "integer": "int", "long": "long", "float": "float", "double": "double",
                       "boolean": "boolean", "char": "char", "byte": "byte", "short": "short"}


class SourceLanguageError(ValueError):
    """Python was given where Java or JavaScript is required."""


def _parser(language: CallLanguage) -> Callable[[str], Any]:
    if language == "java":
        from bfcl_eval.model_handler.parser.java_parser import parse_java_function_call

        return parse_java_function_call
    if language == "javascript":
        from bfcl_eval.model_handler.parser.js_parser import parse_javascript_function_call

        return parse_javascript_function_call
    raise SourceLanguageError(f"no source decoder for {language!r}")


def is_call_list(decoded: Any) -> bool:
    """Whether `decoded` has the shape the official checker takes: `[{name: {param: value}}, ...]`."""
    return isinstance(decoded, list) and all(
        isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item.values())), dict) for item in decoded
    )


def decode_source_calls(text: Any, language: CallLanguage) -> list[FunctionCall]:
    """Decode a Java/JavaScript result as `bfcl evaluate` does for prompt models (its tree-sitter decoder).

    Raises:
        NotACallError: `text` is not text, or the decoder finds no call in it (the official "wrong output format").
        BadCallError: the decoder fails (a syntax error, a repeated argument).
        SourceLanguageError: `language` is python.
    """
    parse = _parser(language)
    if not isinstance(text, str):
        raise NotACallError(f"a {language} result must be call text, got {type(text).__name__}")
    cleaned = text.strip("`\n ")
    cleaned = ("" if cleaned.startswith("[") else "[") + cleaned + ("" if cleaned.endswith("]") else "]")
    try:
        with _DECODER_LOCK:
            decoded = parse(cleaned[1:-1])
    except Exception as exc:  # the official decoder raises SyntaxError or a bare Exception; all mean "failed"
        raise BadCallError(f"the official {language} decoder failed: {exc}") from None
    if not is_call_list(decoded):
        raise NotACallError(f"the official {language} decoder found no call")
    return [FunctionCall(name, dict(arguments)) for item in decoded for name, arguments in item.items()]


def _types(functions: Sequence[FunctionDoc], name: str) -> Mapping[str, Mapping[str, Any]]:
    for doc in functions:
        if doc.get("name") == name:
            return doc.get("parameters", {}).get("properties", {})
    return {}


def converted(value: str, declared: Mapping[str, Any], language: CallLanguage) -> Any:
    """What the official checker makes of a string argument of a parameter declared as `declared`."""
    kind = str(declared.get("type", "any"))
    table = JAVA_TYPE_CONVERSION if language == "java" else JS_TYPE_CONVERSION
    if kind not in table:
        return value
    convert = java_type_converter if language == "java" else js_type_converter
    items = declared.get("items")
    nested = items.get("type") if kind in NESTED_TYPES and isinstance(items, Mapping) else None
    try:
        return convert(value, kind, nested) if nested else convert(value, kind)
    except Exception:  # the official converters raise on some types (Set, Queue); the checker would fail too
        return _Unconvertible(value)


class _Unconvertible:
    """A value the official converter raises on: equal to nothing, so no written form is taken for it."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def _candidates(value: str, kind: str, language: CallLanguage) -> list[str]:
    quoted = [f'"{value}"'] if not re.search(r'["\\\n\r]', value) else []
    if language == "javascript" and "'" not in value and "\\" not in value and "\n" not in value:
        quoted.append(f"'{value}'")
    plain = [value] if value.strip() == value and value else []
    wrapped = [f"{JAVA_WRAPPER}({value})"] if language == "java" and value.strip() else []
    first, second = (quoted, plain) if kind in ("String", "char") else (plain, quoted)
    return [*first, *second, *wrapped]


def source_argument(name: str, key: str, value: str, declared: Mapping[str, Any], language: CallLanguage) -> str:
    """How to write the string argument `key` of a call of `name` in the call text (see the module docstring);
    each form is tried in the call `name(key=…)` through the official decoder."""
    target = converted(value, declared, language)
    for candidate in _candidates(value, str(declared.get("type", "any")), language):
        try:
            decoded = decode_source_calls(f"{name}({key}={candidate})", language)
        except CallParseError:
            continue
        if len(decoded) == 1 and set(decoded[0].arguments) == {key}:
            back = decoded[0].arguments[key]
            if isinstance(back, str) and converted(back, declared, language) == target:
                return candidate
    return value


def format_source_calls(calls: Sequence[FunctionCall], functions: Sequence[FunctionDoc],
                        language: CallLanguage) -> str | None:
    """The result text of Java/JavaScript calls (`[Name.method(a="x", b=42L)]`), or None when a call cannot be
    written as source: a name that is not a dotted identifier, or an argument that is not a string (the official
    checker's type check fails such an argument; text would turn it into a string)."""
    parts: list[str] = []
    for call in calls:
        if not _DOTTED_NAME.match(call.name) or not all(
            isinstance(key, str) and key.isidentifier() and isinstance(value, str)
            for key, value in call.arguments.items()
        ):
            return None
        types = _types(functions, call.name)
        arguments = ", ".join(f"{key}={source_argument(call.name, key, value, types.get(key, {}), language)}"
                              for key, value in call.arguments.items())
        parts.append(f"{call.name}({arguments})")
    return "[" + ", ".join(parts) + "]"


def _scalar(value: Any, kind: str, language: CallLanguage) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}L" if kind == "long" else f"{value}n" if kind == "Bigint" else str(value)
    if isinstance(value, float) and math.isfinite(value):
        text = repr(value) if kind != "integer" else str(int(value))
        return f"{text}f" if language == "java" and kind == "float" else text
    raise ValueError(f"no {language} source for {value!r} as {kind}")


def _literal(value: Any, language: CallLanguage) -> str:
    """A value as a literal of the language, as the official collection parsers read elements back."""
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item, language) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_literal(item, language)}" for key, item in value.items()) + "}"
    return _scalar(value, "any", language)


def source_value(value: Any, declared: Mapping[str, Any], language: CallLanguage) -> str:
    """A ground-truth value as the source string the official checker converts back to it.

    A string ground truth (a variable name, or a parameter of a string type) is the source itself.

    Raises:
        ValueError: a value of a kind no form is written for (a non-finite float, a nested collection the
            official parsers do not read).
    """
    kind = str(declared.get("type", "any"))
    items = declared.get("items")
    item_kind = str(items.get("type", "any")) if isinstance(items, Mapping) else "any"
    if isinstance(value, str) or not isinstance(value, (list, dict)):
        return _scalar(value, kind, language)
    if language == "java" and kind == "HashMap" and isinstance(value, dict):
        puts = " ".join(f'put("{key}", {_literal(item, language)});' for key, item in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    if language == "java" and kind == "ArrayList" and isinstance(value, list):
        elements = [f'"{item}"' if item_kind in ("String", "char") else _scalar(item, item_kind, language)
                    for item in value]
        return f"new ArrayList<>(Arrays.asList({', '.join(elements)}))"
    if language == "java" and isinstance(value, list):
        element = _JAVA_ARRAY_ELEMENT.get(item_kind, "Object")
        return f"new {element}[]{{{', '.join(_scalar(item, item_kind, language) for item in value)}}}"
    if language == "javascript" and isinstance(value, list):
        elements = [f'"{item}"' if isinstance(item, str) and item_kind == "String" else _literal(item, language)
                    if not isinstance(item, (int, float)) or isinstance(item, bool) else _scalar(item, item_kind, language)
                    for item in value]
        return "[" + ", ".join(elements) + "]"
    return _literal(value, language)
