"""Ground truth turned into the calls a perfect model would make (for the scripted oracle and for tests).

Single-turn ground truth lists allowed values per parameter. The oracle takes the first allowed value that
is not `""`, and leaves a parameter out when `""` (omittable) is its only option (`gecko.convert.bfcl.answer_arguments`,
which `gecko verify` uses too).
Multi-turn ground truth is call text, parsed safely with the task's function docs.
"""

from __future__ import annotations

from benchmarks.bfcl.loader import MultiTurnTask, SingleTurnTask
from benchmarks.bfcl.parse import FunctionCall, parse_calls
from gecko.convert.bfcl import answer_arguments


def single_turn_oracle_calls(task: SingleTurnTask) -> list[FunctionCall]:
    """The calls of the ground truth, one per expected call (none for irrelevance tasks)."""
    calls: list[FunctionCall] = []
    for expected in task.ground_truth or ():
        for name, parameters in expected.items():
            calls.append(FunctionCall(name, answer_arguments(parameters)))
    return calls


def multi_turn_oracle_calls(task: MultiTurnTask) -> list[list[FunctionCall]]:
    """The ground-truth calls per turn, with positional arguments named from the function docs.

    Raises:
        CallParseError: A ground-truth string is not a literal-only call (none is, in bfcl-eval 2026.3.23).
    """
    functions = task.functions_at_turn(len(task.turns))
    return [[call for text in turn for call in parse_calls(text, functions)] for turn in task.ground_truth]
