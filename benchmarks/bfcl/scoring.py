"""Scoring result records against BFCL tasks: decoding, the official checkers, and per-category accuracy.

Decoding follows `bfcl evaluate` for prompt models, with our safe parser in place of the official decoder:

- single-turn: `result` is call text (`[f(a=1)]`), or a function-calling list `[{name: "<json args>"}]`;
  anything that does not decode fails the AST categories;
- irrelevance categories: correct iff the model made no call, i.e. the result is not call text (prose),
  or decodes to no call (`[]`). Text shaped like calls that the safe parser refuses (say `f(x=g())`) still
  counts as a call: failing closed, where the official decoder would have evaluated it;
- simple_java, simple_javascript: `result` is Java/JavaScript call text, decoded by the official tree-sitter
  decoder and checked with that language's type rules (`source_calls`); anything else fails;
- multi-turn: `result` is a list per turn of step texts; steps that do not decode or hold no call are
  skipped, as the official runner skips them. Calls to names outside the entry's function docs (all
  methods of its involved classes) are dropped instead of executed: the official executor would `eval`
  them and record a NameError. A turn count different from the ground truth is `force_terminated`;
- agentic (web_search): `result` is one conversation of steps; the last step without a call is the answer, checked
  by the official `agentic_checker` for one of the accepted answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bfcl_eval.eval_checker.agentic_eval.agentic_checker import agentic_checker

from benchmarks.bfcl.categories import is_irrelevance, is_relevance
from benchmarks.bfcl.checker import CheckResult, check_ast, check_multi_turn
from benchmarks.bfcl.export import ResultRecord
from benchmarks.bfcl.languages import CallLanguage, call_language
from benchmarks.bfcl.loader import (
    BfclTask,
    FunctionDoc,
    MultiTurnTask,
    SingleTurnTask,
    WebSearchTask,
    load_category,
)
from benchmarks.bfcl.parse import (
    BadCallError,
    CallParseError,
    FunctionCall,
    NotACallError,
    calls_to_dicts,
    format_calls,
    parse_calls,
)
from benchmarks.bfcl.source_calls import decode_source_calls


class ResultSetError(ValueError):
    """A result set cannot be scored as asked: unknown or duplicate ids, or missing ids without `partial`."""


@dataclass(frozen=True)
class EntryScore:
    """The verdict for one task."""

    id: str
    valid: bool
    error_type: str | None = None
    errors: tuple[str, ...] = ()
    decoded: Any = None
    """What was checked: `[{name: args}]` (single-turn) or call text per step per turn (multi-turn)."""
    details: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class CategoryScore:
    """Accuracy of one model on one category."""

    category: str
    entries: tuple[EntryScore, ...]
    dataset_size: int
    """Number of tasks in the category; more than `total` when a partial result set was scored."""

    @property
    def total(self) -> int:
        """Entries scored."""
        return len(self.entries)

    @property
    def correct(self) -> int:
        """Entries judged valid."""
        return sum(entry.valid for entry in self.entries)

    @property
    def accuracy(self) -> float:
        """`correct / total` (0.0 for an empty set)."""
        return self.correct / self.total if self.total else 0.0

    @property
    def partial(self) -> bool:
        """Whether only part of the category was scored."""
        return self.total < self.dataset_size

    @property
    def failures(self) -> tuple[EntryScore, ...]:
        """The entries judged invalid."""
        return tuple(entry for entry in self.entries if not entry.valid)


def _decode_function_calling(items: list[Any]) -> list[FunctionCall]:
    calls: list[FunctionCall] = []
    for item in items:
        if not isinstance(item, Mapping) or len(item) != 1:
            raise BadCallError("a function-calling result item must be {name: arguments}")
        ((name, arguments),) = item.items()
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as exc:
                raise BadCallError(f"arguments of {name!r} are not JSON: {exc}") from None
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            raise BadCallError(f"arguments of {name!r} must be a JSON object")
        calls.append(FunctionCall(name=name, arguments=dict(arguments)))
    return calls


def decode_calls(result: Any, functions: Sequence[FunctionDoc]) -> list[FunctionCall]:
    """Decode one single-turn result or one multi-turn step into calls.

    Raises:
        NotACallError: The result holds no call syntax (prose, a number, None).
        BadCallError: The result is shaped like calls but was refused.
    """
    if isinstance(result, str):
        return parse_calls(result, functions)
    if isinstance(result, list):
        return _decode_function_calling(result)
    raise NotACallError(f"a result of type {type(result).__name__} holds no call")


def _failed(task_id: str, error_type: str, message: str, decoded: Any = None) -> EntryScore:
    return EntryScore(id=task_id, valid=False, error_type=error_type, errors=(message,), decoded=decoded)


def _from_check(task_id: str, check: CheckResult, decoded: Any) -> EntryScore:
    return EntryScore(
        id=task_id,
        valid=check.valid,
        error_type=check.error_type,
        errors=check.errors,
        decoded=decoded,
        details=dict(check.details) or None,
    )


def score_relevance(task: SingleTurnTask, result: Any) -> EntryScore:
    """Score one relevance result: valid iff it decodes to at least one call (as `bfcl evaluate` does; output the
    safe decoder refuses fails, closed)."""
    try:
        calls = decode_calls(result, task.functions)
    except CallParseError as exc:
        return _failed(task.id, "relevance_error:decoder_failed",
                       f"Invalid syntax. Failed to decode AST when it should have. {exc}")
    if not calls:
        return _failed(task.id, "relevance_error:decoder_failed", "The model made no call.", [])
    return EntryScore(id=task.id, valid=True, decoded=calls_to_dicts(calls))


def score_single_turn(task: SingleTurnTask, result: Any) -> EntryScore:
    """Score one single-turn result (AST checker, "no call" for irrelevance, "a call" for relevance)."""
    if is_relevance(task.category):
        return score_relevance(task, result)
    language = call_language(task.category)
    if language != "python":
        return score_source_language(task, result, language)
    try:
        calls = decode_calls(result, task.functions)
    except NotACallError as exc:
        if is_irrelevance(task.category):
            return EntryScore(id=task.id, valid=True)
        return _failed(task.id, "ast_decoder:decoder_failed", f"Invalid syntax. Failed to decode AST. {exc}")
    except BadCallError as exc:
        if is_irrelevance(task.category):
            return _failed(task.id, "irrelevance_error:refused_call", f"Call-shaped output (refused: {exc}).")
        return _failed(task.id, "ast_decoder:refused", f"Refused by the safe decoder: {exc}")
    decoded = calls_to_dicts(calls)
    if is_irrelevance(task.category):
        if calls:
            return _failed(task.id, "irrelevance_error:decoder_success", "The model made a call.", decoded)
        return EntryScore(id=task.id, valid=True, decoded=decoded)
    if task.ground_truth is None:
        raise ValueError(f"{task.id} has no ground truth")
    return _from_check(task.id, check_ast(task.functions, calls, task.ground_truth, task.category), decoded)


def score_source_language(task: SingleTurnTask, result: Any, language: CallLanguage) -> EntryScore:
    """Score one Java/JavaScript result: the official tree-sitter decoder, then the AST checker with that
    language's type rules (`source_calls`)."""
    try:
        calls = decode_source_calls(result, language)
    except NotACallError as exc:
        return _failed(task.id, "ast_decoder:decoder_wrong_output_format", str(exc))
    except BadCallError as exc:
        return _failed(task.id, "ast_decoder:decoder_failed", f"Invalid syntax. Failed to decode AST. {exc}")
    if task.ground_truth is None:
        raise ValueError(f"{task.id} has no ground truth")
    check = check_ast(task.functions, calls, task.ground_truth, task.category, language)
    return _from_check(task.id, check, calls_to_dicts(calls))


def _decode_steps(task: MultiTurnTask, turn: list[Any]) -> list[list[FunctionCall]]:
    functions = task.functions_at_turn(len(task.turns))
    allowed = {doc["name"] for doc in functions}
    steps: list[list[FunctionCall]] = []
    for step in turn:
        try:
            calls = [call for call in decode_calls(step, functions) if call.name in allowed]
            format_calls(calls)  # function-calling JSON may hold values no literal can express (NaN)
        except (CallParseError, ValueError):
            continue
        if calls:
            steps.append(calls)
    return steps


def score_multi_turn(task: MultiTurnTask, result: Any) -> EntryScore:
    """Score one multi-turn result with the official multi-turn checker."""
    if not isinstance(result, list) or not all(isinstance(turn, list) for turn in result):
        return _failed(task.id, "multi_turn:inference_error", "The result is not a list of turns of steps.")
    if len(result) != len(task.ground_truth):
        message = f"The model result has {len(result)} turns; the ground truth has {len(task.ground_truth)}."
        return _failed(task.id, "multi_turn:force_terminated", message)
    steps = [_decode_steps(task, turn) for turn in result]
    decoded = [[format_calls(step) for step in turn] for turn in steps]
    return _from_check(task.id, check_multi_turn(task, steps), decoded)


def last_message(task: MultiTurnTask, result: Any) -> Any:
    """The last step of an agentic result (`[[step, …]]`) that holds no call: the final answer the official
    agentic runner checks (None when every step decodes to calls)."""
    last = None
    for step in result[0]:
        try:
            calls = decode_calls(step, task.functions)
        except CallParseError:
            calls = []
        if not calls:
            last = step
    return last


def score_agentic(task: WebSearchTask, result: Any) -> EntryScore:
    """Score one agentic result as `bfcl evaluate` does: one conversation of steps, whose last step without a call
    must contain one of the accepted answers (the official `agentic_checker`: case, spaces and `,./-_*^()` ignored)."""
    if not isinstance(result, list) or len(result) != 1 or not isinstance(result[0], list):
        return _failed(task.id, "agentic:inference_error", "The result is not a list of one conversation's steps.")
    message = last_message(task, result)
    if message is None:
        return _failed(task.id, "agentic:no_last_message", "Cannot find the last chat message that is not a call.")
    verdict = agentic_checker(message, list(task.answers))
    if verdict["valid"]:
        return EntryScore(id=task.id, valid=True, decoded=message)
    return _failed(task.id, str(verdict["error_type"]), str(verdict["error_message"]), message)


def score_entry(task: BfclTask, result: Any) -> EntryScore:
    """Score one result for its task."""
    if isinstance(task, WebSearchTask):
        return score_agentic(task, result)
    if isinstance(task, MultiTurnTask):
        return score_multi_turn(task, result)
    return score_single_turn(task, result)


def score_category(
    category: str,
    records: Iterable[ResultRecord],
    *,
    partial: bool = False,
    tasks: Sequence[BfclTask] | None = None,
) -> CategoryScore:
    """Score a model's records for one category, in dataset order.

    Args:
        category: The category the records belong to.
        records: One record per task id.
        partial: Score the ids present only; otherwise every task of the category must have a record.
        tasks: The category's tasks (loaded when omitted).

    Raises:
        ResultSetError: An id is not in the category or appears twice, or ids are missing without `partial`.
    """
    tasks = load_category(category) if tasks is None else tasks
    by_id: dict[str, ResultRecord] = {}
    for record in records:
        if record.id in by_id:
            raise ResultSetError(f"{category}: duplicate result for {record.id}")
        by_id[record.id] = record
    known = {task.id for task in tasks}
    unknown = sorted(set(by_id) - known)
    if unknown:
        raise ResultSetError(f"{category}: {len(unknown)} ids not in the category, e.g. {unknown[0]}")
    missing = len(known) - len(by_id)
    if missing and not partial:
        raise ResultSetError(
            f"{category}: {missing} of {len(known)} tasks have no result; pass partial=True (--partial-eval)"
        )
    entries = tuple(score_entry(task, by_id[task.id].result) for task in tasks if task.id in by_id)
    return CategoryScore(category=category, entries=entries, dataset_size=len(tasks))
