"""Result files in the layout and format the official `bfcl evaluate` reads, written one atomic line at a time.

Layout: `<result_dir>/<model_dir>/<group>/BFCL_v4_<category>_result.json`, where `model_dir` is the model name
with `/` replaced by `_` and `group` is `non_live`, `live` or `multi_turn` (`bfcl evaluate` finds the files
with a recursive glob; the official CLI also needs `model_dir` to be a model it has registered).
Each line is one JSON object: `id`, `result`, `input_token_count`, `output_token_count`, `latency`, plus any
extra fields. `result` is the prompt-model text format: single-turn `"[f(a=1), g(b='x')]"`, multi-turn one
list per turn of step texts; token counts and latency are numbers (single-turn) or per turn/step lists.

Durability: every line is written with one `write` of the complete line on an `O_APPEND` descriptor, then
`fsync`. A crash can leave at most a torn last line. Readers ignore an unterminated last line that does not
parse; the writer, when it reopens a file to resume, first truncates such a tail, so new lines never glue
onto a fragment. Resume means: read the ids already present and skip them.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from benchmarks.bfcl.categories import category_group, id_sort_key, result_file_name
from benchmarks.bfcl.parse import FunctionCall, format_calls


class ResultRecord(BaseModel):
    """One line of a result file."""

    model_config = ConfigDict(extra="allow")

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


class CorruptResultsError(ValueError):
    """A line other than the last one of a result file is not a valid record (not a torn write)."""


class DuplicateResultError(ValueError):
    """A record for this task id was already written to the file."""


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
    if not path.exists():
        return []
    text = path.read_bytes().decode("utf-8")
    lines = text.split("\n")
    tail = lines.pop()
    records: list[ResultRecord] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(_parse_line(line))
        except ValidationError as exc:
            raise CorruptResultsError(
                f"{path}:{number}: not a result record: {exc.errors()[0]['msg']}"
            ) from None
    if tail.strip():
        try:
            records.append(_parse_line(tail))
        except ValidationError:
            pass
    return records


def read_result_ids(path: Path) -> set[str]:
    """Ids already present in a result file (what a resumed run skips)."""
    return {record.id for record in read_results(path)}


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _repair_tail(path: Path) -> None:
    """Make the file end at a line boundary: terminate a complete last record, drop a torn one."""
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    try:
        _parse_line(data[cut:].decode("utf-8"))
    except (ValidationError, UnicodeDecodeError):
        with path.open("r+b") as handle:
            handle.truncate(cut)
            handle.flush()
            os.fsync(handle.fileno())
        return
    with path.open("ab") as handle:
        handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _encode(record: ResultRecord) -> bytes:
    return (record.model_dump_json() + "\n").encode("utf-8")


class ResultWriter:
    """Appends records to one result file, one durable line each; safe to share between worker threads.

    Args:
        path: The result file (parent directories are created).
        resume: Reopen an existing file, repair a torn tail and skip the ids it holds. Without it an
            existing non-empty file is refused, so a new run never mixes with an old one by accident.

    Raises:
        FileExistsError: The file exists and is not empty, and `resume` is False.
        CorruptResultsError: Resuming a file with a corrupt line before its end.
    """

    def __init__(self, path: Path, *, resume: bool = False) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        if existed and path.stat().st_size and not resume:
            raise FileExistsError(f"{path} already has results; resume it or choose another output dir")
        if existed:
            _repair_tail(path)
        self._ids = read_result_ids(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if not existed:
            _fsync_dir(path.parent)
        # Guards `_ids` and keeps two threads from interleaving the write+fsync of their lines.
        self._lock = threading.Lock()

    @property
    def done_ids(self) -> frozenset[str]:
        """Ids already in the file (written before or by this writer)."""
        with self._lock:
            return frozenset(self._ids)

    def __contains__(self, task_id: object) -> bool:
        with self._lock:
            return task_id in self._ids

    def append(self, record: ResultRecord) -> None:
        """Write one record as a complete line and fsync it.

        Raises:
            DuplicateResultError: The file already holds a record for this id.
        """
        data = _encode(record)
        with self._lock:
            if record.id in self._ids:
                raise DuplicateResultError(f"{self.path} already holds a result for {record.id}")
            _write_all(self._fd, data)
            os.fsync(self._fd)
            self._ids.add(record.id)

    def close(self) -> None:
        """Close the file descriptor (idempotent)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def dedupe_records(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """One record per id, the last one winning, sorted by id as `bfcl evaluate` sorts them."""
    latest: dict[str, ResultRecord] = {}
    for record in records:
        latest[record.id] = record
    return sorted(latest.values(), key=lambda record: id_sort_key(record.id))


def write_results(path: Path, records: Iterable[ResultRecord]) -> int:
    """Replace `path` atomically (temp file, fsync, rename) with the given records; returns their count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = b"".join(_encode(record) for record in records)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        _write_all(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(temp_name, path)
    except BaseException:
        os.unlink(temp_name)
        raise
    _fsync_dir(path.parent)
    return payload.count(b"\n")


def merge_results(sources: Sequence[Path], destination: Path) -> int:
    """Merge result files into `destination` without duplicate ids; later sources win on a clash.

    `destination` may be one of the sources. Returns the number of records written.
    """
    records = [record for source in sources for record in read_results(source)]
    return write_results(destination, dedupe_records(records))
