"""The retry feedback: it names the previous attempt as every viewer numbers it (from 0), never cuts a rejected
call's error (the allowed arguments) mid-word, and fits a budget by leaving out calls, rejected ones last."""

from __future__ import annotations

from gats import AttemptRecord, Verdict, build_feedback, load_feedback_prompt
from gats.feedback import cut
from inference.agents import AgentRun, AgentStep
from inference.tools import CallRecord, ToolError, ToolOutcome

ALLOWED = ("Unknown argument 'nm1'. Allowed arguments: " + ", ".join(f"number_{i}" for i in range(40)) + ".")


def _call(number: int, ok: bool) -> CallRecord:
    error = ToolError(ALLOWED, "/nm1", "additionalProperties", "syntactic")
    outcome = (ToolOutcome(True, '{"result": ' + str(number) + "}", status=200) if ok else
               ToolOutcome(False, '{"error": "invalid"}', status=422, errors=(error,)))
    return CallRecord(f"c{number}", 0, "add", '{"nm1": 1}', {"nm1": number}, None, outcome, 0.01)


def _attempt(calls: list[CallRecord], index: int = 0) -> AttemptRecord:
    run = AgentRun("script", (AgentStep(0, None, tuple(calls)),), "done", None)
    return AttemptRecord(index, "failed", "s", run, None, Verdict(False, 0.0, ("add",)))


def test_the_previous_attempt_is_named_as_the_viewers_number_it() -> None:
    text = build_feedback(_attempt([_call(1, True)], index=0), load_feedback_prompt()).text
    assert "(attempt 0, counting from 0)" in text and "attempt 1" not in text


def test_a_rejected_calls_error_is_kept_whole_and_nothing_is_cut_mid_word() -> None:
    text = build_feedback(_attempt([_call(1, False)]), load_feedback_prompt()).text
    assert "/nm1: " + ALLOWED in text  # 430 characters: the allowed arguments, all of them
    long = "Allowed arguments: num1, num2, " + "x" * 10
    assert cut(long, 27) == "Allowed arguments: num1 … [18 more characters]"
    assert cut("a" * 50, 10) == "a" * 10 + " … [40 more characters]"  # no boundary at all: cut at the limit


def test_a_budget_leaves_out_calls_rejected_ones_last_and_says_so() -> None:
    calls = [_call(i, i != 3) for i in range(1, 41)]
    full = build_feedback(_attempt(calls), load_feedback_prompt()).text
    short = build_feedback(_attempt(calls), load_feedback_prompt(), max_chars=1000).text
    assert len(full) > 2500 and len(short) < len(full) - 1000
    assert "\n3. add" in short and ALLOWED in short and "\n40. add" in short and "\n1. add" not in short
    assert "calls left out to fit the model's context" in short
