"""The filters on hand-made episodes: near duplicates (numbers, case, punctuation, call ids ignored), the split by
task whatever the run, and the reasons counted."""

from __future__ import annotations

from benchmarks.data_export.filters import ExportReport, FilterOptions, apply_filters
from benchmarks.data_export.formats import split_of
from benchmarks.data_export.model import Attempt, Call, Episode, TaskRef
from benchmarks.data_export.rows import dpo_rows, sft_rows

TOOLS = ({"type": "function", "function": {"name": "area", "parameters": {"type": "object"}}},)


def episode(task: str, request: str, value: int, *, run: str = "r1", call_id: str = "c0",
            failed_first: bool = False) -> Episode:
    ref = TaskRef("bfcl", run, task, "simple_python", "m", task, None)
    good = Attempt(1 if failed_first else 0, True, (Call(call_id, 0, "area", {"side": value}, None, True, "{}"),),
                   "Done.", "fix it" if failed_first else None)
    attempts = (Attempt(0, False, (Call(call_id, 0, "area", {"side": "x"}, None, False, "bad"),), "Done.", None),
                good) if failed_first else (good,)
    return Episode(ref, 0, ({"role": "user", "content": request},), TOOLS, attempts, good.index, None)


def test_near_duplicates_differ_only_in_numbers_case_punctuation_or_ids() -> None:
    episodes = [episode("t1", "Area of a square, side 3.", 3), episode("t2", "area of a square side 4", 4,
                                                                          call_id="other"),
                episode("t3", "Perimeter of a square, side 3.", 3)]
    report = ExportReport()
    kept = apply_filters([r for e in episodes for r in sft_rows(e, "final", False)], FilterOptions(), report)
    assert [r.episode.task.key for r in kept] == ["t1", "t3"]
    assert report.public()["sft"] == {"candidates": 3, "kept": 2, "dropped": {"near_duplicate": 1}}
    report = ExportReport()
    assert len(apply_filters([r for e in episodes for r in sft_rows(e, "final", False)],
                             FilterOptions(near_dedup=False), report)) == 3


def test_a_task_lands_in_one_split_whatever_the_run() -> None:
    rows = [row for run in ("a", "b", "c") for task in range(40)
            for row in sft_rows(episode(f"t{task}", f"request {task}", task, run=run), "final", False)]
    splits: dict[str, set[str]] = {}
    for row in rows:
        splits.setdefault(row.episode.task.source_task_id, set()).add(split_of(row, 0.5))
    assert all(len(s) == 1 for s in splits.values())
    assert {next(iter(s)) for s in splits.values()} == {"train", "validation"}


def test_a_pair_needs_a_failed_attempt_before_a_passing_one() -> None:
    corrected = episode("t1", "Area, side 3", 3, failed_first=True)
    pairs = dpo_rows(corrected, False)
    assert len(pairs) == 1 and pairs[0].rejected_attempt == 0 and pairs[0].feedback == "fix it"
    assert pairs[0].data["chosen"][0]["tool_calls"][0]["function"]["arguments"] == '{"side": 3}'
    assert "1 call(s) rejected" in (pairs[0].rejected_reason or "")
    assert dpo_rows(episode("t2", "Area, side 3", 3), False) == []
    first = sft_rows(corrected, "corrections", False)
    assert [m["role"] for m in first[0].data["messages"]] == ["user", "assistant", "tool", "assistant", "user",
                                                               "assistant", "tool", "assistant"]
    report = ExportReport()
    assert apply_filters(first, FilterOptions(first_round=True), report) == []
    assert report.public()["correction"]["dropped"] == {"not_first_round": 1}
