"""Seeded faults planted in a valid sample, to measure that verification flags them (each kind must be).

| kind                | what changes in one call (chosen with the seed)                 | flagged as              |
|---------------------|------------------------------------------------------------------|-------------------------|
| `unknown_tool`      | the tool name gets a suffix                                      | `unknown_tool`          |
| `missing_required`  | a required argument the call gives is dropped                    | `required`              |
| `unknown_argument`  | an argument the tool does not declare is added                   | `additionalProperties`  |
| `wrong_type`        | an argument with a declared type gets a value of another type   | `type`                  |
| `enum_violation`    | an argument with an `enum` gets a value outside it               | `enum`                  |

A kind that does not apply to the sample (no required argument given, no enum …) gives None.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping
from typing import Any

from gecko.toolkits.model import Operation
from gecko.verify.samples import Sample, ToolCall

UNKNOWN_ARGUMENT = "gecko_unexpected_argument"
_OTHER_TYPE: dict[str, Any] = {"string": 12345, "integer": "not a number", "number": "not a number",
                               "boolean": "not a boolean", "array": "not an array", "object": "not an object",
                               "null": "not null"}

Change = Callable[[ToolCall, Operation, random.Random], bool]


def _properties(operation: Operation) -> Mapping[str, Any]:
    schema = operation.args_schema if isinstance(operation.args_schema, Mapping) else {}
    return schema.get("properties") or {}


def _unknown_tool(call: ToolCall, operation: Operation, rng: random.Random) -> bool:
    call.name = f"{call.name}_gecko_unknown"
    return True


def _missing_required(call: ToolCall, operation: Operation, rng: random.Random) -> bool:
    schema = operation.args_schema if isinstance(operation.args_schema, Mapping) else {}
    given = [name for name in schema.get("required", ()) if name in call.arguments]
    if not given:
        return False
    del call.arguments[rng.choice(sorted(given))]
    return True


def _unknown_argument(call: ToolCall, operation: Operation, rng: random.Random) -> bool:
    schema = operation.args_schema if isinstance(operation.args_schema, Mapping) else {}
    if schema.get("additionalProperties", True) is not False or UNKNOWN_ARGUMENT in _properties(operation):
        return False
    call.arguments[UNKNOWN_ARGUMENT] = rng.randint(0, 999)
    return True


def _wrong_type(call: ToolCall, operation: Operation, rng: random.Random) -> bool:
    typed = sorted(name for name, prop in _properties(operation).items()
                   if name in call.arguments and isinstance(prop, Mapping) and isinstance(prop.get("type"), str)
                   and prop["type"] in _OTHER_TYPE and "anyOf" not in prop and "oneOf" not in prop)
    if not typed:
        return False
    name = rng.choice(typed)
    call.arguments[name] = _OTHER_TYPE[_properties(operation)[name]["type"]]
    return True


def _enum_violation(call: ToolCall, operation: Operation, rng: random.Random) -> bool:
    enums = sorted(name for name, prop in _properties(operation).items()
                   if isinstance(prop, Mapping) and isinstance(prop.get("enum"), list) and prop.get("type") == "string")
    if not enums:
        return False
    name = rng.choice(enums)
    call.arguments[name] = "gecko-not-an-allowed-value"
    return True


PERTURBATIONS: dict[str, Change] = {
    "unknown_tool": _unknown_tool, "missing_required": _missing_required, "unknown_argument": _unknown_argument,
    "wrong_type": _wrong_type, "enum_violation": _enum_violation,
}
EXPECTED_ERROR: dict[str, str] = {
    "unknown_tool": "unknown_tool", "missing_required": "required", "unknown_argument": "additionalProperties",
    "wrong_type": "type", "enum_violation": "enum",
}
"""The error keyword each kind must produce."""


def perturb_sample(sample: Sample, kind: str, operations: Mapping[str, Operation], seed: int) -> Sample | None:
    """A copy of `sample` with one fault of `kind` in one of its calls (None: the kind does not apply).

    `operations` maps the sample's tool names to their compiled operations (`Verifier.operations`).
    """
    change = PERTURBATIONS[kind]
    rng = random.Random(f"{seed}:{sample.id}:{kind}")
    order = list(range(len(sample.calls)))
    rng.shuffle(order)
    for index in order:
        operation = operations.get(sample.calls[index].name)
        if operation is None or not isinstance(sample.calls[index].arguments, dict):
            continue
        candidate = copy.deepcopy(sample)
        if change(candidate.calls[index], operation, rng):
            candidate.calls[index].alternatives = []  # the fault is in the replayed arguments, not hidden behind others
            candidate.id = f"{sample.id}#{kind}"
            return candidate
    return None
