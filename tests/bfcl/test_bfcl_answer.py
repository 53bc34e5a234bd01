"""The exported answer is the calls as the agent made them: nothing dropped, nothing rewritten."""

from __future__ import annotations

from benchmarks.bfcl.answer import export_answer
from benchmarks.bfcl.loader import SingleTurnTask, load_category
from benchmarks.bfcl.scoring import score_single_turn
from inference.tools import CallRecord, CatalogTool, ToolOutcome

SPEC = CatalogTool("simple_python_1", "math_factorial", "math.factorial", "math_factorial")
REJECTED = ToolOutcome(False, "{}", status=422, error_kind="invalid_arguments")


def _call(arguments: dict | None, *, spec: CatalogTool | None = SPEC, name: str = "math_factorial",
          raw: str = "", outcome: ToolOutcome = REJECTED) -> CallRecord:
    return CallRecord("c", 0, name, raw or str(arguments), arguments, spec, outcome, 0.0)


def _task(task_id: str) -> SingleTurnTask:
    task = next(t for t in load_category(task_id.rsplit("_", 1)[0]) if t.id == task_id)
    assert isinstance(task, SingleTurnTask)
    return task


def test_rejected_calls_stay_and_arguments_are_not_rewritten() -> None:
    calls = [_call({"number": "5"}), _call({"number": 5}, outcome=ToolOutcome(True, "{}"))]
    text = export_answer(calls)
    assert text == "[math.factorial(number='5'), math.factorial(number=5)]"
    assert not score_single_turn(_task("simple_python_1"), text).valid
    assert score_single_turn(_task("simple_python_1"), export_answer(calls[1:])).valid


def test_unknown_names_and_malformed_arguments_are_kept_and_fail() -> None:
    misspelled = export_answer([_call({"number": 5}, spec=None, name="math_factoriall")])
    assert misspelled == "[math_factoriall(number=5)]"
    malformed = export_answer([_call(None, raw='{"number": 5')])
    assert malformed == [{"math.factorial": '{"number": 5'}]
    assert not score_single_turn(_task("simple_python_1"), malformed).valid
    keyword = export_answer([_call({"from": 1})])
    assert keyword == [{"math.factorial": '{"from": 1}'}]


def test_no_call_is_an_empty_list() -> None:
    assert export_answer([]) == "[]"
    assert score_single_turn(_task("irrelevance_0"), "[]").valid
