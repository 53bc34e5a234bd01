"""The feedback a retry gets: the previous attempt's calls with their results, its answer, and what is still
to do (the judge's remaining objectives, plus calls no judge could see), rendered from
`prompts/retry_feedback.md` and kept short (long arguments and results are cut)."""

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
MAX_ANSWER_CHARS = 600


def load_feedback_prompt(path: Path | None = None) -> Prompt:
    """The feedback template (default: `prompts/retry_feedback.md`)."""
    return load_prompt(path or PROMPT_PATH)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def _call_line(number: int, call: CallRecord) -> str:
    arguments = dumps_compact(call.arguments) if call.arguments is not None else call.raw_arguments
    head = f"{number}. {call.agent_name}({_cut(arguments, MAX_ARGUMENTS_CHARS)})"
    if call.outcome.ok:
        return f"{head}\n   -> ok: {_cut(call.outcome.content, MAX_RESULT_CHARS)}"
    return f"{head}\n   -> REJECTED: {_cut(call.outcome.content, MAX_RESULT_CHARS)}"


def remaining_objectives(attempt: AttemptRecord) -> tuple[str, ...]:
    """What the previous attempt left undone: the judge's remaining objectives, then the failed calls
    that never reached the judge."""
    items: list[str] = list(attempt.verdict.remaining) if attempt.verdict is not None else []
    for call in attempt.unreached:
        items.append(f"Call {call.agent_name!r} never ran: {call.outcome.errors[0].message if call.outcome.errors else ''}")
    return tuple(items)


def build_feedback(attempt: AttemptRecord, prompt: Prompt) -> RetryFeedback:
    """The feedback for the attempt after `attempt`.

    Args:
        attempt: The previous attempt (one that ran).
        prompt: The template (`load_feedback_prompt()`), with `$attempt`, `$calls`, `$answer`, `$remaining`.
    """
    calls = attempt.calls
    lines = "\n".join(_call_line(i, call) for i, call in enumerate(calls, start=1)) or "(no calls)"
    answer = attempt.final_text
    answer_block = f"\nIts final answer: {_cut(answer, MAX_ANSWER_CHARS)}\n" if answer else ""
    remaining = remaining_objectives(attempt)
    remaining_text = "\n".join(f"- {item}" for item in remaining) or "- (nothing was named; review the results above)"
    text = Template(prompt.text).safe_substitute(
        attempt=attempt.index + 1, calls=lines, answer=answer_block, remaining=remaining_text)
    return RetryFeedback(attempt.index, calls, answer, remaining, text)
