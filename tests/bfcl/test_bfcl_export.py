"""Result files: official layout and format, atomic writes, torn last lines, merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bfcl.export import (
    CorruptResultsError,
    ResultRecord,
    merge_results,
    model_dir_name,
    multi_turn_result,
    read_results,
    result_path,
    single_turn_result,
    write_results,
)
from benchmarks.bfcl.parse import FunctionCall


def _record(task_id: str, result: object = "[f(a=1)]", **extra: object) -> ResultRecord:
    return ResultRecord(
        id=task_id, result=result, input_token_count=10, output_token_count=3, latency=0.5, **extra
    )


def _official_load(path: Path) -> list[dict]:
    """What `bfcl_eval.utils.load_file` does with a result file (json.loads on every line)."""
    with open(path) as handle:
        return [json.loads(line) for line in handle.readlines()]


def test_layout_and_result_forms(tmp_path: Path) -> None:
    assert result_path(tmp_path, "org/model-1", "live_simple") == (
        tmp_path / "org_model-1" / "live" / "BFCL_v4_live_simple_result.json"
    )
    assert model_dir_name("a/b/c") == "a_b_c"
    calls = [FunctionCall("math.hypot", {"x": 3, "y": 4})]
    assert single_turn_result(calls) == "[math.hypot(x=3, y=4)]"
    assert single_turn_result([]) == "[]"
    assert multi_turn_result([[calls, []], []]) == [["[math.hypot(x=3, y=4)]"], []]


def test_write_read_round_trip_in_official_format(tmp_path: Path) -> None:
    path = result_path(tmp_path, "m", "multi_turn_base")
    multi = _record("multi_turn_base_0", [["[cd(folder='x')]"], []], reasoning="kept")
    multi = multi.model_copy(update={"input_token_count": [[5], []], "latency": [[0.1], []]})
    assert write_results(path, [_record("multi_turn_base_1", [["[ls()]"]]), multi]) == 2
    loaded = read_results(path)
    assert [r.id for r in loaded] == ["multi_turn_base_1", "multi_turn_base_0"]
    assert loaded[1].result == [["[cd(folder='x')]"], []]
    assert loaded[1].model_extra == {"reasoning": "kept"}
    official = _official_load(path)
    assert official[1] == {
        "id": "multi_turn_base_0",
        "result": [["[cd(folder='x')]"], []],
        "input_token_count": [[5], []],
        "output_token_count": 3,
        "latency": [[0.1], []],
        "reasoning": "kept",
    }
    assert path.stat().st_mode & 0o777 == 0o644 and not list(path.parent.glob(".*.tmp"))


def test_torn_last_line_is_ignored_and_complete_unterminated_one_kept(tmp_path: Path) -> None:
    path = tmp_path / "BFCL_v4_simple_python_result.json"
    write_results(path, [_record("simple_python_0"), _record("simple_python_1")])
    with path.open("ab") as handle:
        handle.write(b'{"id": "simple_python_2", "result": "[f(a=')
    assert [r.id for r in read_results(path)] == ["simple_python_0", "simple_python_1"]
    path.write_text(_record("a_0").model_dump_json() + "\n" + _record("a_1").model_dump_json())
    assert [r.id for r in read_results(path)] == ["a_0", "a_1"]


def test_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"id": "a_0", "result": "[]"}\nnot json\n{"id": "a_1", "result": "[]"}\n')
    with pytest.raises(CorruptResultsError, match=":2:"):
        read_results(path)


def test_merge_without_duplicates(tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    write_results(first, [_record(f"simple_python_{i}", "[old()]") for i in (10, 2, 1)])
    write_results(second, [_record("simple_python_2", "[new()]"), _record("simple_python_3")])
    assert merge_results([first, second], first) == 4
    merged = _official_load(first)
    assert [r["id"] for r in merged] == [
        "simple_python_1",
        "simple_python_2",
        "simple_python_3",
        "simple_python_10",
    ]
    assert merged[1]["result"] == "[new()]"
    assert not list(tmp_path.glob(".*.tmp"))
