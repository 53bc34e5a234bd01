"""Ground truth turned into the calls a perfect model would make (for the scripted oracle and for tests).

Single-turn ground truth lists allowed values per parameter. The oracle takes the first allowed value that
is not `""`, and leaves a parameter out when `""` (omittable) is its only option, or when it is omittable and
the function doc does not declare it (`gecko.convert.bfcl.answer_arguments`,
which `gecko verify` uses too).
Java and JavaScript answers (simple_java, simple_javascript) are strings of source that the official checker
converts back to the ground truth's values (`source_calls.source_value`).
Relevance tasks (live_relevance) have no ground truth: any call passes, so the oracle calls the first offered
function with placeholder values for its required parameters (`relevance_call`).
Multi-turn ground truth is call text, parsed safely with the task's function docs.
"""

from __future__ import annotations

from typing import Any

from benchmarks.bfcl.categories import is_relevance
from benchmarks.bfcl.languages import call_language
from benchmarks.bfcl.loader import FunctionDoc, MultiTurnTask, SingleTurnTask
from benchmarks.bfcl.parse import FunctionCall, parse_calls
from benchmarks.bfcl.source_calls import source_value
from gecko.convert.bfcl import answer_arguments

_PLACEHOLDERS: dict[str, Any] = {"string": "example", "integer": 1, "float": 1.0, "number": 1.0, "boolean": True,
                                  "array": [], "tuple": [], "dict": {}, "any": "example"}


def _placeholder(schema: dict[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    return _PLACEHOLDERS.get(str(schema.get("type")), "example")


def relevance_call(function: FunctionDoc) -> FunctionCall:
    """A call of `function` with a placeholder value (first enum value, default, or one per type) for each
    required parameter."""
    parameters = function.get("parameters", {})
    properties = parameters.get("properties", {})
    return FunctionCall(function["name"], {name: _placeholder(properties.get(name, {}))
                                           for name in parameters.get("required", ())})


def single_turn_oracle_calls(task: SingleTurnTask) -> list[FunctionCall]:
    """The calls of the ground truth, one per expected call (none for irrelevance tasks; one placeholder call of
    the first function for relevance tasks)."""
    if is_relevance(task.category):
        return [relevance_call(task.functions[0])] if task.functions else []
    calls: list[FunctionCall] = []
    language = call_language(task.category)
    documented = {doc["name"]: doc.get("parameters", {}).get("properties", {}) for doc in task.functions}
    for expected in task.ground_truth or ():
        for name, parameters in expected.items():
            known = documented.get(name)
            # a few answers (parallel_multiple_12, _26) list an omittable parameter the function doc lacks: leave it out
            kept = {param: options for param, options in parameters.items()
                    if known is None or param in known or "" not in options}
            arguments = answer_arguments(kept)
            if language != "python":
                declared = known or {}
                arguments = {param: source_value(value, declared.get(param, {}), language)
                             for param, value in arguments.items()}
            calls.append(FunctionCall(name, arguments))
    return calls


def multi_turn_oracle_calls(task: MultiTurnTask) -> list[list[FunctionCall]]:
    """The ground-truth calls per turn, with positional arguments named from the function docs.

    Raises:
        CallParseError: A ground-truth string is not a literal-only call (none is, in bfcl-eval 2026.3.23).
    """
    functions = task.functions_at_turn(len(task.turns))
    return [[call for text in turn for call in parse_calls(text, functions)] for turn in task.ground_truth]
