from __future__ import annotations

import pytest

from gecko.pipeline.validate.syntactic import validate_arguments
from gecko.toolkits import load_toolkits
from tests.conftest import TOOLKITS_DIR


@pytest.fixture(scope="module")
def create_note():
    return load_toolkits([TOOLKITS_DIR]).get("notes", "create_note")


def by_pointer(violations):
    return {v.pointer: v for v in violations}


def test_valid_arguments_have_no_violations(create_note):
    assert validate_arguments(create_note, {"title": "t", "body": "b", "tags": ["a", "b"], "priority": 3,
                                            "due": "2024-02-29", "owner": "a@b.io", "score": 0.5,
                                            "target": {"phone": "+1234567"}, "color": 3,
                                            "limits": {"low": 1, "high": 2}}) == []


def test_all_violations_are_reported_with_pointers_and_keywords(create_note):
    args = {
        "body": 5, "extra": 1, "tags": ["UP", "a", "a", "b"], "priority": 9, "due": "2024-02-30",
        "reminder": "tomorrow", "owner": "nobody", "ref": "not-a-uuid", "link": "no scheme", "score": 1,
        "notebook": "garage", "meta": {"pinned": "yes"}, "target": {"email": "a@b.io", "phone": "+1234567"},
        "color": "green", "limits": {"low": 1},
    }
    found = {(v.pointer, v.keyword) for v in validate_arguments(create_note, args)}
    expected = {
        "/title": "required", "/body": "type", "/extra": "additionalProperties", "/tags": "maxItems",
        "/tags/0": "pattern", "/priority": "maximum", "/due": "format", "/reminder": "format", "/owner": "format",
        "/ref": "format", "/link": "format", "/score": "exclusiveMaximum", "/notebook": "enum",
        "/meta/source": "required", "/meta/pinned": "type", "/target": "oneOf", "/color": "anyOf",
        "/limits/high": "required",
    }
    for pair in expected.items():
        assert pair in found, f"missing violation {pair}: {sorted(found)}"
    assert ("/tags", "uniqueItems") in found
    tags = [v for v in validate_arguments(create_note, {"title": "t", "body": "b", "tags": ["a", "a"]})]
    assert [v.keyword for v in tags] == ["uniqueItems"]


def test_messages_are_actionable_sentences(create_note):
    violations = validate_arguments(create_note, {"title": "", "body": "b", "priority": "high", "notebook": "x",
                                                  "bogus": True})
    text = " ".join(v.message for v in violations)
    assert "Unknown argument 'bogus'" in text and "Allowed arguments:" in text
    assert "Argument 'title' must have at least 1 characters." in text
    assert "Argument 'priority' must be an integer, not a string." in text
    assert "must be one of: 'inbox', 'work', 'home'" in text
    assert all(v.message.endswith(".") for v in violations)


def test_non_object_arguments(create_note):
    violations = validate_arguments(create_note, ["title"])
    assert violations and violations[0].pointer == "" and violations[0].keyword == "type"


def test_error_count_is_bounded(create_note):
    args = {"title": "t", "body": "b", **{f"x{i}": i for i in range(500)}}
    assert len(validate_arguments(create_note, args)) == 50


def test_each_missing_required_argument_is_reported_once(create_note):
    violations = validate_arguments(create_note, {"priority": 3})
    missing = [v.pointer for v in violations if v.keyword == "required"]
    assert sorted(missing) == ["/body", "/title"]
