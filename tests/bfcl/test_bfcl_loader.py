"""Loading BFCL tasks from the installed bfcl-eval data, and selecting them."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bfcl.categories import (
    ALL_CATEGORIES,
    UnknownCategoryError,
    category_group,
    expand_categories,
    id_sort_key,
)
from benchmarks.bfcl.loader import (
    MultiTurnTask,
    SingleTurnTask,
    TaskSelectionError,
    load_category,
    load_class_functions,
    load_tasks,
    select_tasks,
)
from benchmarks.bfcl.runtime import OPENAPI_DIR, PYTHON_HINT, prompt_functions, real_tools, toolkit_paths
from benchmarks.runner.selection import read_ids_file
from tests.infra import require

EXPECTED_COUNTS = {
    "simple_python": 400,
    "simple_java": 100,
    "simple_javascript": 50,
    "multiple": 200,
    "parallel": 200,
    "parallel_multiple": 200,
    "irrelevance": 240,
    "live_simple": 258,
    "live_multiple": 1053,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
    "live_irrelevance": 884,
    "live_relevance": 16,
    "multi_turn_base": 200,
    "multi_turn_miss_func": 200,
    "multi_turn_miss_param": 200,
    "multi_turn_long_context": 200,
    "web_search_base": 100,
    "web_search_no_snippet": 100,
}


@pytest.mark.parametrize("category", ALL_CATEGORIES)
def test_counts_and_types(category: str) -> None:
    tasks = load_category(category)
    assert len(tasks) == EXPECTED_COUNTS[category]
    assert len({task.id for task in tasks}) == len(tasks)
    for task in tasks:
        assert task.category == category
        assert task.id.startswith(category + "_")
        assert task.functions or category == "live_irrelevance"  # a few live_irrelevance entries offer none
        if isinstance(task, SingleTurnTask):
            assert task.toolkits == (task.id,)
            assert len(task.turns) == 1 and task.messages[-1].role in {"user", "assistant"}
            assert (task.ground_truth is None) == ("relevance" in category)
        else:
            assert isinstance(task, MultiTurnTask)
            assert task.toolkits == task.involved_classes
            assert len(task.turns) == len(task.ground_truth)
            assert task.long_context == (category == "multi_turn_long_context")


def test_multi_turn_functions_follow_involved_classes() -> None:
    task = load_category("multi_turn_base")[0]
    assert isinstance(task, MultiTurnTask)
    assert task.involved_classes == ("TwitterAPI", "GorillaFileSystem")
    expected = load_class_functions("TwitterAPI") + load_class_functions("GorillaFileSystem")
    assert list(task.functions) == expected
    assert len(task.functions) == 32
    assert task.ground_truth[2] == ("sort('final_report.pdf')",)
    assert "GorillaFileSystem" in task.initial_config


def test_miss_func_holds_out_docs_until_their_turn() -> None:
    task = load_category("multi_turn_miss_func")[0]
    assert isinstance(task, MultiTurnTask)
    assert [doc["name"] for doc in task.missed_functions[3]] == ["sort"]
    assert "sort" not in {doc["name"] for doc in task.functions}
    assert "sort" not in {doc["name"] for doc in task.functions_at_turn(2)}
    assert "sort" in {doc["name"] for doc in task.functions_at_turn(3)}
    assert task.turns[3] == ()
    assert task.ground_truth[2] == ()


def test_excluded_function_is_kept_as_metadata() -> None:
    tasks = [
        t for t in load_category("multi_turn_base") if isinstance(t, MultiTurnTask) and t.excluded_functions
    ]
    assert len(tasks) == 18


def test_selection_by_ids_short_ids_and_num_tasks(tmp_path: Path) -> None:
    tasks = load_category("simple_python")
    assert [t.id for t in select_tasks(tasks, ids=["3", "simple_python_1"])] == [
        "simple_python_1",
        "simple_python_3",
    ]
    assert len(select_tasks(tasks, num_tasks=5)) == 5
    assert len(select_tasks(tasks)) == 400
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("# picked\nsimple_python_7\n\n8  # short form\n")
    assert read_ids_file(ids_file) == ["simple_python_7", "8"]
    assert [t.id for t in load_tasks("simple_python", ids_file=ids_file)] == [
        "simple_python_7",
        "simple_python_8",
    ]
    with pytest.raises(TaskSelectionError):
        load_tasks("simple_python", ids=["1"], ids_file=ids_file)
    with pytest.raises(TaskSelectionError):
        select_tasks(tasks, ids=["simple_python_9999"])
    with pytest.raises(TaskSelectionError):
        select_tasks(tasks, num_tasks=-1)


def test_live_short_ids() -> None:
    tasks = load_category("live_simple")
    first = tasks[0].id
    index = first.rsplit("_", 1)[1]
    assert [t.id for t in select_tasks(tasks, ids=[index])] == [first]
    assert [t.id for t in select_tasks(tasks, ids=[index.split("-")[0]])] == [first]


def test_categories_and_groups() -> None:
    assert expand_categories(["all"]) == list(ALL_CATEGORIES)
    assert expand_categories(["live", "simple_python"]) == [
        "simple_python",
        "live_simple",
        "live_multiple",
        "live_parallel",
        "live_parallel_multiple",
        "live_irrelevance",
        "live_relevance",
    ]
    assert category_group("irrelevance") == "non_live"
    assert category_group("parallel_multiple") == "non_live"
    assert category_group("multi_turn_long_context") == "multi_turn"
    with pytest.raises(UnknownCategoryError):
        expand_categories(["format_sensitivity"])
    assert sorted(["x_10", "x_9", "x_2-1-0"], key=id_sort_key) == ["x_2-1-0", "x_9", "x_10"]


def test_runtime_toolkits_prompt_docs_and_real_tools() -> None:
    single = load_category("simple_python")[0]
    assert toolkit_paths(single) == [OPENAPI_DIR / "single_turn" / "simple_python_0.json"]
    docs = prompt_functions(single)
    assert docs[0]["description"].endswith(PYTHON_HINT)
    assert not single.functions[0]["description"].endswith(PYTHON_HINT)

    multi = load_category("multi_turn_miss_func")[0]
    assert isinstance(multi, MultiTurnTask)
    assert toolkit_paths(multi) == [OPENAPI_DIR / "multi_turn" / f"{c}.json" for c in multi.involved_classes]
    late = prompt_functions(multi, turn=3)
    assert late[-1]["name"] == "sort" and not late[-1]["description"].endswith(PYTHON_HINT)
    assert len(late) == len(prompt_functions(multi, turn=0)) + 1
    assert "sort" in real_tools(multi).tool_names()


def test_every_task_has_its_generated_toolkits() -> None:
    require(OPENAPI_DIR.is_dir(), "BFCL toolkits are not built (make toolkits)")
    missing = [
        path
        for category in ALL_CATEGORIES
        for task in load_category(category)
        for path in toolkit_paths(task)
        if not path.is_file()
    ]
    assert missing == []
