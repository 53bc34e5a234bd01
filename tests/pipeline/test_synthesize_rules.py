"""The rules synthesizer's guarantee over the test and example toolkits: every response validates."""

from __future__ import annotations

import itertools

import pytest

from gecko.pipeline.synthesize.rules import NO_SCHEMA_RESPONSE, synthesize_rules
from gecko.toolkits import load_toolkits
from tests.conftest import TOOLKITS_DIR
from utils.paths import EXAMPLE_TOOLKITS_DIR


def all_operations():
    for directory in (TOOLKITS_DIR, EXAMPLE_TOOLKITS_DIR):
        for toolkit in load_toolkits([directory]).toolkits.values():
            yield from toolkit.operations.values()


@pytest.mark.parametrize("operation", list(all_operations()), ids=lambda op: op.tool_name)
def test_every_rules_response_validates(operation):
    """The guarantee: every 200 response validates against the operation's response schema."""
    for session, args in itertools.product(("s1", "s2"), ({}, {"note_id": "N-1"}, {"x": [1, 2]})):
        body = synthesize_rules(operation, args, f"{session}|{args}")
        if operation.response_validator is None:
            assert body == NO_SCHEMA_RESPONSE
        else:
            assert operation.response_validator.is_valid(body), body
