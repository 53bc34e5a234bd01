"""The feedback a retry gets: the previous attempt's calls with their results, its answer, and what is still
to do (the judge's remaining objectives, plus calls no judge could see), rendered from
`prompts/retry_feedback.md` and kept short (long arguments and results are cut at a word boundary; the errors of a
rejected call are kept whole up to `MAX_ERROR_CHARS`; with a budget, calls beyond it are left out, rejected ones
last)."""

from __future__ import annotations

from pathlib import Path
from string import Template

from gats.model import AttemptRecord
from inference.agents.base import RetryFeedback
from inference.tools.execution import CallRecord
from utils.jsonutil import dumps_compact
from utils.llm import Prompt, load_prompt

PROMPT_PATH = Path(__file__).resolve().parent / "prompts" / "retry_feedback.md"
MAX_ARGUMENTS_CHARS = 300
MAX_RESULT_CHARS = 300
MAX_ERROR_CHARS = 600
"""Per error of a rejected call: its message names what to fix (the allowed arguments, the expected type), so it
gets more room than a result, and is cut only at a word boundary."""
MAX_ERRORS = 5
MAX_ANSWER_CHARS = 600
_BREAKS = " ,;"
"""Where a cut may fall (never inside a word or a name)."""


def load_feedback_prompt(path: Path | None = None) -> Prompt:
    """The feedback template (default: `prompts/retry_feedback.md`)."""
    return load_prompt(path or PROMPT_PATH)


def cut(text: str, limit: int) -> str:
    """`text`, or its first at most `limit` characters ending at a space, comma or semicolon (a name is never cut
    in half; a text without one there is cut at `limit`), and how many characters were left out."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    boundary = max(head.rfind(mark) for mark in _BREAKS)
    if boundary >= limit // 2:
        head = head[:boundary]
    head = head.rstrip(_BREAKS)
    return f"{head} … [{len(text) - len(head)} more characters]"


def _rejection(call: CallRecord) -> str:
    """Why a call was rejected: each error's message whole (up to `MAX_ERROR_CHARS`) with the argument it is about;
    the raw reply when there are no errors."""
    errors = call.outcome.errors
    if not errors:
        return cut(call.outcome.content, MAX_RESULT_CHARS)
    lines = [cut(f"{error.pointer}: {error.message}" if error.pointer else error.message, MAX_ERROR_CHARS)
             for error in errors[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS:
        lines.append(f"… {len(errors) - MAX_ERRORS} more errors")
    return "; ".join(lines)


def _call_line(number: int, call: CallRecord) -> str:
    arguments = dumps_compact(call.arguments) if call.arguments is not None else call.raw_arguments
    head = f"{number}. {call.agent_name}({cut(arguments, MAX_ARGUMENTS_CHARS)})"
    if call.outcome.ok:
        return f"{head}\n   -> ok: {cut(call.outcome.content, MAX_RESULT_CHARS)}"
    return f"{head}\n   -> REJECTED: {_rejection(call)}"


def _calls_block(calls: tuple[CallRecord, ...], budget: int | None) -> str:
    """The numbered calls; with a `budget` (characters), the rejected ones first kept whole, then the last ones, and
    a line saying how many were left out."""
    lines = [_call_line(i, call) for i, call in enumerate(calls, start=1)]
    if not lines:
        return "(no calls)"
    if budget is None or sum(len(line) + 1 for line in lines) <= budget:
        return "\n".join(lines)
    keep: set[int] = set()
    used = 0
    order = [i for i, c in enumerate(calls) if not c.outcome.ok] + [i for i in reversed(range(len(calls)))
                                                                    if calls[i].outcome.ok]
    for index in order:
        if used + len(lines[index]) + 1 > budget:
            continue
        keep.add(index)
        used += len(lines[index]) + 1
    kept = [lines[i] for i in sorted(keep)]
    return "\n".join([*kept, f"({len(calls) - len(keep)} of its {len(calls)} calls left out to fit the model's "
                                "context; rejected calls are kept before the others)"])


def remaining_objectives(attempt: AttemptRecord) -> tuple[str, ...]:
    """What the previous attempt left undone: the judge's remaining objectives, then the failed calls
    that never reached the judge."""
    items: list[str] = list(attempt.verdict.remaining) if attempt.verdict is not None else []
    for call in attempt.unreached:
        items.append(f"Call {call.agent_name!r} never ran: {call.outcome.errors[0].message if call.outcome.errors else ''}")
    return tuple(items)


def build_feedback(attempt: AttemptRecord, prompt: Prompt, max_chars: int | None = None) -> RetryFeedback:
    """The feedback for the attempt after `attempt`.

    Args:
        attempt: The previous attempt (one that ran). It is named by its index, as `gecko view`, the session
            viewer and the fork labels number attempts (the first is attempt 0).
        prompt: The template (`load_feedback_prompt()`), with `$attempt`, `$calls`, `$answer`, `$remaining`.
        max_chars: At most this many characters of calls (the rest of the template is small); None: every call.
            Set from the planner's context window, so that a long attempt's feedback cannot overflow it.
    """
    calls = attempt.calls
    answer = attempt.final_text
    answer_block = f"\nIts final answer: {cut(answer, MAX_ANSWER_CHARS)}\n" if answer else ""
    remaining = remaining_objectives(attempt)
    remaining_text = "\n".join(f"- {item}" for item in remaining) or "- (nothing was named; review the results above)"
    text = Template(prompt.text).safe_substitute(
        attempt=attempt.index, calls=_calls_block(calls, max_chars), answer=answer_block, remaining=remaining_text)
    return RetryFeedback(attempt.index, calls, answer, remaining, text)
