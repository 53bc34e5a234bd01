"""Ground truth turned into the calls a perfect model would make (for the scripted oracle and for tests).

Single-turn ground truth lists allowed values per parameter. The oracle takes the first allowed value that
is not `""`, and leaves a parameter out when `""` (omittable) is its only option. A dict value (or a dict
inside a list value) holds allowed values per key and is resolved the same way, one level deep: the
official checker compares anything deeper as a plain literal.
Multi-turn ground truth is call text, parsed safely with the task's function docs.
"""

from __future__ import annotations

from typing import Any

from benchmarks.bfcl.loader import MultiTurnTask, SingleTurnTask
from benchmarks.bfcl.parse import FunctionCall, parse_calls

_OMIT = object()


def _first(options: list[Any]) -> Any:
    return next((option for option in options if option != ""), _OMIT)


def _resolve_dict(allowed: dict[str, list[Any]]) -> dict[str, Any]:
    chosen = {key: _first(options) for key, options in allowed.items()}
    return {key: value for key, value in chosen.items() if value is not _OMIT}


def _parameter_value(option: Any) -> Any:
    """A dict option (or a dict in a list option) maps keys to allowed values; deeper values are literal."""
    if isinstance(option, dict):
        return _resolve_dict(option)
    if isinstance(option, list):
        return [_resolve_dict(item) if isinstance(item, dict) else item for item in option]
    return option


def single_turn_oracle_calls(task: SingleTurnTask) -> list[FunctionCall]:
    """The calls of the ground truth, one per expected call (none for irrelevance tasks)."""
    calls: list[FunctionCall] = []
    for expected in task.ground_truth or ():
        for name, parameters in expected.items():
            chosen = {param: _first(options) for param, options in parameters.items()}
            arguments = {
                param: _parameter_value(value) for param, value in chosen.items() if value is not _OMIT
            }
            calls.append(FunctionCall(name, arguments))
    return calls


def multi_turn_oracle_calls(task: MultiTurnTask) -> list[list[FunctionCall]]:
    """The ground-truth calls per turn, with positional arguments named from the function docs.

    Raises:
        CallParseError: A ground-truth string is not a literal-only call (none is, in bfcl-eval 2026.3.23).
    """
    functions = task.functions_at_turn(len(task.turns))
    return [[call for text in turn for call in parse_calls(text, functions)] for turn in task.ground_truth]
