"""Durable files of the runner: atomic replacement, and JSON Lines that survive torn writes and threads."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from benchmarks.runner.files import CorruptLinesError, JsonLinesAppender, read_json_lines, write_atomic

ERRORS = (ValueError,)


def _read(path: Path) -> list[dict]:
    return read_json_lines(path, json.loads, ERRORS)


def test_torn_last_line_is_ignored_and_dropped_when_appending_again(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    with JsonLinesAppender(path, json.loads, ERRORS) as appender:
        appender.append('{"n": 0}')
        appender.append('{"n": 1}')
    with path.open("ab") as handle:
        handle.write(b'{"n": 2, "tor')
    assert _read(path) == [{"n": 0}, {"n": 1}]
    with JsonLinesAppender(path, json.loads, ERRORS) as appender:
        appender.append('{"n": 2}')
    assert path.read_text().splitlines() == ['{"n": 0}', '{"n": 1}', '{"n": 2}']


def test_a_complete_unterminated_last_line_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_text('{"n": 0}\n{"n": 1}')
    assert _read(path) == [{"n": 0}, {"n": 1}]
    with JsonLinesAppender(path, json.loads, ERRORS) as appender:
        appender.append('{"n": 2}')
    assert _read(path) == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_a_corrupt_line_before_the_end_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_text('{"n": 0}\nnot json\n{"n": 2}\n')
    with pytest.raises(CorruptLinesError, match=":2:"):
        _read(path)
    assert _read(tmp_path / "missing.jsonl") == []


def test_concurrent_appends_stay_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    big = "x" * 100_000
    with JsonLinesAppender(path, json.loads, ERRORS) as appender:
        threads = [threading.Thread(target=lambda i=i: appender.append(json.dumps({"n": i, "pad": big if i % 2 else ""})))
                   for i in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(line["n"] for line in _read(path)) == list(range(40))


@pytest.mark.parametrize(("mask", "mode"), [(0o077, 0o600), (0o022, 0o644)])
def test_write_atomic_replaces_whole_files_with_the_umask_mode(tmp_path: Path, mask: int, mode: int) -> None:
    os.umask(mask)  # restored by the suite's autouse fixture
    path = tmp_path / "sub" / "file.json"
    write_atomic(path, "first")
    write_atomic(path, b"second")
    assert path.read_text() == "second" and path.stat().st_mode & 0o777 == mode
    assert [p.name for p in path.parent.iterdir()] == ["file.json"]
