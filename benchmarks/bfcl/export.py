"""Result files in the layout and format the official `bfcl evaluate` reads, written atomically.

Layout: `<result_dir>/<model_dir>/<group>/BFCL_v4_<category>_result.json`, where `model_dir` is the model name
with `/` replaced by `_` and `group` is `non_live`, `live` or `multi_turn` (`bfcl evaluate` finds the files
with a recursive glob; the official CLI also needs `model_dir` to be a model it has registered).
Each line is one JSON object: `id`, `result`, `input_token_count`, `output_token_count`, `latency`, plus any
extra fields. `result` is the prompt-model text format: single-turn `"[f(a=1), g(b='x')]"`, multi-turn one
list per turn of step texts; token counts and latency are numbers (single-turn) or per turn/step lists.

Result files are written whole and atomically (`write_results`) from the run's checkpoint
(`benchmarks.runner`), sorted by id as `bfcl evaluate` sorts them. Readers ignore an unterminated last line
that does not parse (a file written by another tool and cut short).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from benchmarks.bfcl.categories import category_group, id_sort_key, result_file_name
from benchmarks.bfcl.parse import FunctionCall, format_calls
from benchmarks.runner.files import CorruptLinesError, read_json_lines, write_atomic


class ResultRecord(BaseModel):
    """One line of a result file."""

    model_config = ConfigDict(extra="allow")
    """Extra keys are kept: ours is `gats` (GATS figures of the task), absent from lines of other tools."""

    id: str
    """Task id, e.g. `simple_python_0` or `multi_turn_base_3`."""
    result: Any
    """Single-turn: call text `[f(a=1)]` (`[]` when the model made no call). Multi-turn: step texts per turn."""
    input_token_count: int | list[list[int]] = 0
    """Prompt tokens: a total (single-turn) or one count per step per turn (multi-turn)."""
    output_token_count: int | list[list[int]] = 0
    """Completion tokens, shaped like `input_token_count`."""
    latency: float | list[list[float]] = 0.0
    """Seconds, shaped like `input_token_count`."""


class CorruptResultsError(CorruptLinesError):
    """A line other than the last one of a result file is not a valid record (not a torn write)."""


def model_dir_name(model: str) -> str:
    """Directory name of a model under the result dir: `/` becomes `_`, as `bfcl evaluate` expects;
    characters that are unsafe in paths (`:`, `@`, …, from `openai-compatible:model@url` aliases) too."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", model.replace("/", "_"))


def result_path(result_dir: Path, model: str, category: str) -> Path:
    """Where a model's results for a category go."""
    return result_dir / model_dir_name(model) / category_group(category) / result_file_name(category)


def single_turn_result(calls: Sequence[FunctionCall]) -> str:
    """The `result` of a single-turn task: the calls as keyword-only text, `[]` for no call."""
    return format_calls(calls)


def multi_turn_result(turns: Sequence[Sequence[Sequence[FunctionCall]]]) -> list[list[str]]:
    """The `result` of a multi-turn task: for each turn, one call text per model step that made calls."""
    return [[format_calls(step) for step in turn if step] for turn in turns]


def _parse_line(line: str) -> ResultRecord:
    return ResultRecord.model_validate_json(line)


def read_results(path: Path) -> list[ResultRecord]:
    """All records of a result file, in file order; an unterminated last line that does not parse is ignored.

    Returns an empty list when the file does not exist.

    Raises:
        CorruptResultsError: A complete line is not a valid record.
    """
    try:
        return read_json_lines(path, _parse_line, (ValidationError,))
    except CorruptLinesError as exc:
        raise CorruptResultsError(str(exc)) from None


def dedupe_records(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """One record per id, the last one winning, sorted by id as `bfcl evaluate` sorts them."""
    latest: dict[str, ResultRecord] = {}
    for record in records:
        latest[record.id] = record
    return sorted(latest.values(), key=lambda record: id_sort_key(record.id))


def write_results(path: Path, records: Iterable[ResultRecord]) -> int:
    """Replace `path` atomically (temp file, fsync, rename) with the given records; returns their count."""
    payload = b"".join((record.model_dump_json() + "\n").encode("utf-8") for record in records)
    write_atomic(path, payload)
    return payload.count(b"\n")


def merge_results(sources: Sequence[Path], destination: Path) -> int:
    """Merge result files into `destination` without duplicate ids; later sources win on a clash.

    `destination` may be one of the sources. Returns the number of records written.
    """
    records = [record for source in sources for record in read_results(source)]
    return write_results(destination, dedupe_records(records))
