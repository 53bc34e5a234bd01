"""Reading samples: format detection, each format's calls and results, malformed lines."""

from __future__ import annotations

import json

import pytest

from gecko.verify import detect_format, read_sample
from gecko.verify.samples import NO_RESULT
from tests.verify.verify_data import bfcl_row, openai_row, xlam_row


@pytest.mark.parametrize(("row", "fmt"), [
    (openai_row({"city": "Paris"}), "openai"),
    (xlam_row([]), "xlam"),
    (bfcl_row([]), "bfcl"),
    ({"prompt": "x"}, None),
    ([1, 2], None),
])
def test_format_detection(row: object, fmt: str | None) -> None:
    assert detect_format(row) == fmt


def test_openai_calls_results_task_and_answer() -> None:
    sample = read_sample(json.dumps(openai_row({"city": "Paris"}, result='{"temp": 21}')), 0)
    assert sample.format == "openai" and not sample.problem
    assert sample.task == "Weather in Paris?" and sample.answer == "It is sunny."
    [call] = sample.calls
    assert (call.name, call.arguments, call.result) == ("get_weather", {"city": "Paris"}, {"temp": 21})
    assert read_sample(json.dumps(openai_row({"city": "Paris"})), 0).calls[0].result is NO_RESULT


def test_openai_arguments_that_are_not_json_are_kept_with_the_error() -> None:
    call = read_sample(json.dumps(openai_row('{"city": "Par')), 0).calls[0]
    assert call.arguments == '{"city": "Par' and "not valid JSON" in call.arguments_error


def test_xlam_answers_from_json_strings() -> None:
    sample = read_sample(json.dumps(xlam_row([{"name": "convert_currency", "arguments": {"amount": 10, "target": "EUR"}}])), 3)
    assert sample.id == "1" and sample.task == "Convert 10 USD to EUR"
    assert [(c.name, c.arguments) for c in sample.calls] == [("convert_currency", {"amount": 10, "target": "EUR"})]


def test_bfcl_ground_truth_inline_or_from_answers() -> None:
    truth = [{"math.hypot": {"x": [3], "y": [4], "mode": ["", "N/A", "exact"]}}]
    inline = read_sample(json.dumps(bfcl_row(truth)), 0)
    joined = read_sample(json.dumps(bfcl_row(None)), 0, answers={"demo_0": truth})
    for sample in (inline, joined):
        [call] = sample.calls
        assert call.arguments == {"x": 3, "y": 4, "mode": "N/A"}
        assert {"x": 3, "y": 4} in call.alternatives and {"x": 3, "y": 4, "mode": "exact"} in call.alternatives
    missing = read_sample(json.dumps(bfcl_row(None)), 0)
    assert "no ground truth" in missing.problem


@pytest.mark.parametrize(("line", "fmt", "problem"), [
    ("{not json", None, "not JSON"),
    ('{"prompt": 1}', None, "unknown format"),
    (json.dumps(xlam_row([])), "openai", "looks like xlam"),
    ('{"query": "q", "answers": "[{oops"}', None, "answers is a string but not JSON"),
    ('{"messages": "hello"}', None, "messages must be a list"),
    (json.dumps(bfcl_row([{"math.hypot": {"x": 3}}])), None, "list of allowed values"),
])
def test_malformed_lines_say_why(line: str, fmt: str | None, problem: str) -> None:
    assert problem in read_sample(line, 7, fmt).problem


def test_each_openai_call_knows_the_assistant_message_that_issued_it() -> None:
    row = openai_row({"city": "Paris"})
    call = row["messages"][1]["tool_calls"][0]
    row["messages"][1]["tool_calls"] = [call, {**call, "id": "c2"}]
    row["messages"].insert(2, {"role": "assistant", "content": "Let me check again."})
    row["messages"].insert(3, {"role": "assistant", "content": None, "tool_calls": [{**call, "id": "c3"}]})
    assert [c.message for c in read_sample(json.dumps(row), 0).calls] == [0, 0, 1]
