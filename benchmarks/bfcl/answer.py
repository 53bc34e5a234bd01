"""The exported answer of a task: the best attempt's calls exactly as the agent made them.

Nothing is dropped or rewritten: calls that Gecko rejected stay, arguments are not defaulted or cleaned,
and a call to an unknown (e.g. misspelled) tool keeps the name the agent used. Resolved tools are written
under their original BFCL names (`math.factorial`), as the checker expects.

Format: the keyword-only call text `[f(a=1)]` that `bfcl evaluate` reads for prompt models. When a call
cannot be written that way (arguments that are not a JSON object, a name or an argument key that is not an
identifier), the whole answer is written in the function-calling form `[{name: "<arguments JSON>"}]`,
which `scoring.decode_calls` also reads: such a call then fails the checker instead of being repaired.

Java and JavaScript tasks (simple_java, simple_javascript): Java/JavaScript call text whose arguments decode, with
the official tree-sitter decoder, to what the agent passed (`source_calls.format_source_calls`). A call that cannot
be written so (an argument that is not a string, as the official checker's type check requires) makes the whole
answer the function-calling form, which the official Java/JavaScript decoder fails: closed, as that type check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from benchmarks.bfcl.languages import CallLanguage
from benchmarks.bfcl.loader import FunctionDoc
from benchmarks.bfcl.parse import FunctionCall, format_calls, parse_calls
from benchmarks.bfcl.source_calls import format_source_calls
from inference.tools.execution import CallRecord

_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _as_text(calls: Sequence[CallRecord]) -> str | None:
    converted: list[FunctionCall] = []
    for call in calls:
        if call.arguments is None or not _DOTTED_NAME.match(call.name):
            return None
        converted.append(FunctionCall(call.name, dict(call.arguments)))
    try:
        text = format_calls(converted)
        round_trip = parse_calls(text)
    except ValueError:
        return None
    if [(c.name, c.arguments) for c in round_trip] != [(c.name, c.arguments) for c in converted]:
        return None
    return text


def export_answer(
    calls: Sequence[CallRecord], functions: Sequence[FunctionDoc] = (), language: CallLanguage = "python"
) -> str | list[dict[str, Any]]:
    """The `result` field of a single-turn result line for these calls (`"[]"` for no call).

    Args:
        calls: The best attempt's calls.
        functions: The task's function docs (the declared types of Java/JavaScript arguments).
        language: `call_language` of the task's category.
    """
    if language != "python":
        source = [FunctionCall(call.name, dict(call.arguments)) for call in calls if call.arguments is not None]
        text = format_source_calls(source, functions, language) if len(source) == len(calls) else None
    else:
        text = _as_text(calls)
    if text is not None:
        return text
    return [{call.name: call.raw_arguments if call.arguments is None else json.dumps(call.arguments)}
            for call in calls]
