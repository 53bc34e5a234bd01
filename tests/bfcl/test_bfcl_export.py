"""Result files: official layout and format, atomic appends, torn last lines, resume and merge."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from benchmarks.bfcl.export import (
    CorruptResultsError,
    DuplicateResultError,
    ResultRecord,
    ResultWriter,
    merge_results,
    model_dir_name,
    multi_turn_result,
    read_result_ids,
    read_results,
    result_path,
    single_turn_result,
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
    with ResultWriter(path) as writer:
        writer.append(_record("multi_turn_base_1", [["[ls()]"]]))
        writer.append(multi)
        assert "multi_turn_base_0" in writer
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


def test_torn_last_line_is_ignored_and_repaired_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "BFCL_v4_simple_python_result.json"
    with ResultWriter(path) as writer:
        writer.append(_record("simple_python_0"))
        writer.append(_record("simple_python_1"))
    with path.open("ab") as handle:
        handle.write(b'{"id": "simple_python_2", "result": "[f(a=')
    assert read_result_ids(path) == {"simple_python_0", "simple_python_1"}

    with ResultWriter(path, resume=True) as writer:
        assert writer.done_ids == {"simple_python_0", "simple_python_1"}
        writer.append(_record("simple_python_2"))
    assert [r["id"] for r in _official_load(path)] == [
        "simple_python_0",
        "simple_python_1",
        "simple_python_2",
    ]


def test_complete_but_unterminated_last_line_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(_record("a_0").model_dump_json() + "\n" + _record("a_1").model_dump_json())
    assert read_result_ids(path) == {"a_0", "a_1"}
    with ResultWriter(path, resume=True) as writer:
        writer.append(_record("a_2"))
    assert [r["id"] for r in _official_load(path)] == ["a_0", "a_1", "a_2"]


def test_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"id": "a_0", "result": "[]"}\nnot json\n{"id": "a_1", "result": "[]"}\n')
    with pytest.raises(CorruptResultsError, match=":2:"):
        read_results(path)


def test_existing_results_need_resume_and_ids_are_unique(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    with ResultWriter(path) as writer:
        writer.append(_record("a_0"))
        with pytest.raises(DuplicateResultError):
            writer.append(_record("a_0"))
    with pytest.raises(FileExistsError):
        ResultWriter(path)
    with ResultWriter(path, resume=True) as writer, pytest.raises(DuplicateResultError):
        writer.append(_record("a_0"))
    assert len(read_results(path)) == 1


def test_concurrent_appends_stay_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    big = "[f(text='" + "x" * 100_000 + "')]"
    with ResultWriter(path) as writer:
        threads = [
            threading.Thread(target=lambda i=i: writer.append(_record(f"a_{i}", big if i % 2 else "[]")))
            for i in range(40)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(r["id"] for r in _official_load(path)) == sorted(f"a_{i}" for i in range(40))


def test_merge_without_duplicates(tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    with ResultWriter(first) as writer:
        for i in (10, 2, 1):
            writer.append(_record(f"simple_python_{i}", "[old()]"))
    with ResultWriter(second) as writer:
        writer.append(_record("simple_python_2", "[new()]"))
        writer.append(_record("simple_python_3"))
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
