"""Tool-call dataset samples: the three input formats, detected per line, read into one `Sample` shape.

| format   | one JSON line                                                                                   |
|----------|-------------------------------------------------------------------------------------------------|
| `openai` | `{"messages": [...], "tools": [...]}`: assistant `tool_calls` (arguments as a JSON string or object) and `tool` results (matched by `tool_call_id`) |
| `xlam`   | `{"query", "tools", "answers"}` (xLAM / APIGen; `tools` and `answers` may be JSON strings)      |
| `bfcl`   | `{"id", "question", "function"}` with `"ground_truth"` on the same line, or joined by `id` from a possible-answer file |

A BFCL ground truth lists allowed values per parameter; the replayed call takes the first allowed one
(`gecko.convert.bfcl.answer_arguments`), or, when that is rejected, the first other accepted set that passes
the syntactic check (`ToolCall.alternatives`): a sample is flagged only when no accepted call is valid. A line that is not JSON or fits no format is still a sample:
its `problem` says why, and it gets the verdict `malformed`.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gecko.convert.bfcl import OMITTED, answer_arguments, answer_value

Format = Literal["openai", "xlam", "bfcl"]
FORMATS: tuple[Format, ...] = ("openai", "xlam", "bfcl")
class _NoResult(enum.Enum):
    NO_RESULT = "no result"


NO_RESULT = _NoResult.NO_RESULT
"""`ToolCall.result` of a call the dataset records no result for (the response is simulated)."""
ANSWER_SETS = 16
"""Argument sets tried per BFCL ground-truth call."""


@dataclass
class ToolCall:
    """One call of a sample, as the dataset gives it."""

    name: str
    arguments: Any
    """The parsed arguments; a string when the dataset's arguments text is not JSON (see `arguments_error`)."""
    result: Any = NO_RESULT
    arguments_error: str = ""
    alternatives: list[Any] = field(default_factory=list)
    """Other argument sets the dataset accepts for this call (BFCL possible answers); the first one that
    passes the syntactic check is replayed, so a call is rejected only when no accepted set is valid."""
    message: int = 0
    """Which model message issued the call (0, 1, …): calls of one message are parallel calls. xLAM and BFCL
    single-turn samples are one message."""


@dataclass
class Sample:
    """One dataset line, format-independent."""

    line: str
    """The input line as read (written back unchanged by `--keep`)."""
    id: str
    format: Format | None
    task: str = ""
    tools: Any = None
    """The tool definitions in the format's own shape (converted by `gecko.convert`)."""
    calls: list[ToolCall] = field(default_factory=list)
    answer: str | None = None
    problem: str = ""
    """Why the line could not be read as a sample ('' when it could)."""


class SampleError(ValueError):
    """A line that does not fit its format."""


def detect_format(record: Any) -> Format | None:
    """The format of one parsed line, from its keys (None: no known format)."""
    if not isinstance(record, Mapping):
        return None
    if "messages" in record:
        return "openai"
    if "query" in record and "answers" in record:
        return "xlam"
    if "function" in record and ("question" in record or "ground_truth" in record):
        return "bfcl"
    return None


def read_sample(line: str, index: int, fmt: Format | None = None, answers: Mapping[str, Any] | None = None) -> Sample:
    """The sample of one JSON line (`index` names it when the line has no `id`)."""
    try:
        record = json.loads(line)
    except ValueError as exc:
        return Sample(line, str(index), fmt, problem=f"not JSON: {exc}")
    sample_id = str(record.get("id", index)) if isinstance(record, Mapping) else str(index)
    found = detect_format(record)
    if fmt is not None and found not in (fmt, None):
        return Sample(line, sample_id, fmt, problem=f"looks like {found}, not {fmt}")
    fmt = fmt or found
    if fmt is None:
        return Sample(line, sample_id, None, problem="unknown format: expected messages (openai), "
                                                     "query+answers (xlam) or question+function (bfcl)")
    sample = Sample(line, sample_id, fmt)
    try:
        _READERS[fmt](sample, record, answers or {})
    except (SampleError, TypeError, AttributeError, KeyError) as exc:
        sample.problem = f"{fmt}: {exc}" if isinstance(exc, SampleError) else f"{fmt}: malformed line ({exc!r})"
    return sample


def _json_field(value: Any, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise SampleError(f"{what} is a string but not JSON: {exc}") from None
    return value


def _arguments(raw: Any) -> tuple[Any, str]:
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}, ""
        except ValueError as exc:
            return raw, f"arguments are not valid JSON: {exc}"
    return ({} if raw is None else raw), ""


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "" if content is None else str(content)


def _read_openai(sample: Sample, record: Mapping[str, Any], _: Mapping[str, Any]) -> None:
    messages = record["messages"]
    if not isinstance(messages, list):
        raise SampleError("messages must be a list")
    sample.tools = record.get("tools") or record.get("functions") or []
    results = {m.get("tool_call_id"): m.get("content") for m in messages
               if isinstance(m, Mapping) and m.get("role") in ("tool", "function") and m.get("tool_call_id")}
    users: list[str] = []
    issued = 0
    for message in messages:
        if not isinstance(message, Mapping):
            raise SampleError("every message must be an object")
        role = message.get("role")
        if role == "user":
            users.append(_text(message.get("content")))
        elif role == "assistant":
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                arguments, error = _arguments(function.get("arguments"))
                result = results.get(call.get("id"), NO_RESULT)
                sample.calls.append(ToolCall(str(function.get("name", "")), arguments, _maybe_json(result), error,
                                             message=issued))
            issued += bool(message.get("tool_calls"))
            if message.get("content") and not message.get("tool_calls"):
                sample.answer = _text(message["content"])
    sample.task = "\n".join(u for u in users if u)


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _read_xlam(sample: Sample, record: Mapping[str, Any], _: Mapping[str, Any]) -> None:
    sample.task = str(record["query"])
    sample.tools = _json_field(record.get("tools") or [], "tools")
    answers = _json_field(record["answers"], "answers")
    if not isinstance(answers, list):
        raise SampleError("answers must be a list of {name, arguments}")
    for answer in answers:
        arguments, error = _arguments(answer.get("arguments"))
        sample.calls.append(ToolCall(str(answer.get("name", "")), arguments, arguments_error=error))


def _read_bfcl(sample: Sample, record: Mapping[str, Any], answers: Mapping[str, Any]) -> None:
    sample.tools = record["function"]
    turns = record.get("question") or []
    sample.task = "\n".join(_text(m.get("content")) for turn in turns for m in (turn if isinstance(turn, list) else [turn])
                            if isinstance(m, Mapping) and m.get("role") == "user")
    truth = record.get("ground_truth", answers.get(sample.id))
    if truth is None:
        raise SampleError(f"no ground truth for id {sample.id!r} (give the possible-answer file with --answers)")
    if isinstance(truth, Mapping):
        truth = truth.get("ground_truth")
    if not isinstance(truth, list) or not all(isinstance(t, Mapping) for t in truth):
        raise SampleError("ground_truth must be a list of {function: {param: [allowed values]}}")
    for expected in truth:
        for name, parameters in expected.items():
            if not isinstance(parameters, Mapping) or not all(isinstance(v, list) for v in parameters.values()):
                raise SampleError(f"ground truth of {name!r} must map each parameter to a list of allowed values")
            first, *others = _answer_sets(parameters)
            sample.calls.append(ToolCall(str(name), first, alternatives=others))


def _answer_sets(parameters: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """Argument sets a BFCL possible answer accepts: the first allowed values, the same with every omittable
    parameter left out, then one parameter at a time switched to its other allowed values (at most
    `ANSWER_SETS`)."""
    first = answer_arguments(parameters)
    sets = [first, {k: v for k, v in first.items() if OMITTED not in parameters[k]}]
    for name, options in parameters.items():
        for option in [o for o in options if o != OMITTED][1:]:
            sets.append({**first, name: answer_value(option)})
    unique: list[dict[str, Any]] = []
    for candidate in sets:
        if candidate not in unique:
            unique.append(candidate)
    return unique[:ANSWER_SETS]


_READERS = {"openai": _read_openai, "xlam": _read_xlam, "bfcl": _read_bfcl}
