"""Call records as robustness-metric traces (`utils.faults.metrics`): what each call did, whether an injected
fault touched it, and whether its arguments fit the tool's schema (checked here, the same way for simulated and
real calls; Gecko's own 422 verdict counts where there is one)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from inference.tools.execution import CallRecord
from utils.faults.metrics import TraceCall, side_counts


class SchemaCompliance:
    """Checks call arguments against their tools' schemas (validators compiled once per schema)."""

    def __init__(self) -> None:
        self._validators: dict[int, tuple[Mapping[str, Any], Draft202012Validator | None]] = {}

    def __call__(self, record: CallRecord) -> bool:
        """Whether the call's arguments fit its tool's argument schema (an unknown tool or non-object: no)."""
        if record.tool is None or record.arguments is None:
            return False
        if record.outcome.status == 422 and any(e.source == "syntactic" for e in record.outcome.errors):
            return False
        schema = record.tool.parameters
        entry = self._validators.get(id(schema))
        if entry is None or entry[0] is not schema:
            try:
                Draft202012Validator.check_schema(dict(schema))
                validator: Draft202012Validator | None = Draft202012Validator(
                    dict(schema), format_checker=Draft202012Validator.FORMAT_CHECKER)
            except SchemaError:
                validator = None  # a schema we cannot read says nothing against the call
            entry = self._validators[id(schema)] = (schema, validator)
        return entry[1] is None or entry[1].is_valid(record.arguments)


def trace_calls(records: Iterable[CallRecord], compliance: SchemaCompliance) -> list[TraceCall]:
    """One episode's calls as metric traces."""
    return [TraceCall(record.name, record.arguments, record.outcome.ok, record.outcome.fault, compliance(record))
            for record in records]


def robustness_of(sides: Mapping[str, Sequence[Sequence[CallRecord]]],
                  compliance: SchemaCompliance | None = None) -> dict[str, Any]:
    """Robustness counts per side (`simulated`, `real`) and `all`, from each side's episodes of call records."""
    check = compliance or SchemaCompliance()
    return side_counts({side: [trace_calls(episode, check) for episode in episodes]
                        for side, episodes in sides.items()})
