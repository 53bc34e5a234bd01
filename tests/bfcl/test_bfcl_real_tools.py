"""The BFCL real-tool bridge: same results as the official executor, isolated instances, read/write kinds."""

from __future__ import annotations

import copy
import functools
import uuid
from typing import Any

import pytest
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

from benchmarks.bfcl.categories import MULTI_TURN_CATEGORIES
from benchmarks.bfcl.checker import clear_instance_cache
from benchmarks.bfcl.loader import MultiTurnTask, load_category
from benchmarks.bfcl.parse import parse_calls
from benchmarks.bfcl.real_tools import BFCL_CLASSES, BfclRealTools, load_tool_class, render_result
from inference.tools import RealCall

_tasks = functools.cache(load_category)


def _task(category: str = "multi_turn_base", index: int = 0) -> MultiTurnTask:
    task = _tasks(category)[index]
    assert isinstance(task, MultiTurnTask)
    return task


def _bridge(task: MultiTurnTask) -> BfclRealTools:
    return BfclRealTools(task.involved_classes, task.initial_config, long_context=task.long_context)


def _public_state(instance: object) -> dict:
    return {k: v for k, v in vars(instance).items() if not k.startswith("_")}


def _compare_with_official(task: MultiTurnTask) -> None:
    bridge = _bridge(task)
    functions = task.functions_at_turn(len(task.turns))
    model_name = f"bridge_test_{uuid.uuid4().hex}"
    try:
        for turn_index, turn in enumerate(task.ground_truth):
            official, instances = execute_multi_turn_func_call(
                list(turn),
                copy.deepcopy(dict(task.initial_config)),
                list(task.involved_classes),
                model_name,
                task.id,
                long_context=task.long_context,
            )
            ours = [
                bridge.execute(RealCall(call.name, call.arguments)).content
                for text in turn
                for call in parse_calls(text, functions)
            ]
            assert ours == official, f"{task.id} turn {turn_index}"
            for class_name, instance in instances.items():
                assert _public_state(bridge.instances[class_name]) == _public_state(instance), task.id
    finally:
        clear_instance_cache(model_name)


def test_ground_truth_through_the_bridge_matches_the_official_executor() -> None:
    for task in _tasks("multi_turn_base"):
        assert isinstance(task, MultiTurnTask)
        _compare_with_official(task)


@pytest.mark.parametrize("category", [c for c in MULTI_TURN_CATEGORIES if c != "multi_turn_base"])
def test_other_multi_turn_categories_match_too(category: str) -> None:
    for task in _tasks(category):
        assert isinstance(task, MultiTurnTask)
        _compare_with_official(task)


def test_each_backend_owns_its_instances() -> None:
    task = _task()
    first, second = _bridge(task), _bridge(task)
    before = set(vars(multi_turn_utils))
    assert first.execute(RealCall("mkdir", {"dir_name": "new_dir"})).state_changed is True
    assert "new_dir" in first.execute(RealCall("ls", {})).content
    assert "new_dir" not in second.execute(RealCall("ls", {})).content
    assert set(vars(multi_turn_utils)) == before
    assert first.instances["GorillaFileSystem"] is not second.instances["GorillaFileSystem"]


def test_arguments_are_copied_into_the_tools() -> None:
    bridge = _bridge(_task())
    tags = ["#a"]
    refused = bridge.execute(RealCall("post_tweet", {"content": "hi", "tags": tags}))
    assert refused.error and "not authenticated" in refused.content and refused.state_changed is False
    twitter: Any = bridge.instances["TwitterAPI"]  # bfcl-eval's TwitterAPI (untyped)
    twitter.authenticated = True  # test set-up: skip the login call
    posted = bridge.execute(RealCall("post_tweet", {"content": "hi", "tags": tags}))
    assert not posted.error and posted.state_changed is True
    tags.append("#b")
    assert [t["tags"] for t in twitter.tweets.values() if t["content"] == "hi"] == [["#a"]]


def test_kinds_are_observed_and_default_to_write() -> None:
    bridge = _bridge(_task())
    assert bridge.kind("ls") == "write"
    assert bridge.execute(RealCall("ls", {})).state_changed is False
    assert bridge.kind("ls") == "read"
    assert bridge.execute(RealCall("cd", {"folder": "document"})).state_changed is True
    assert bridge.kind("cd") == "write"
    failed = bridge.execute(RealCall("cd", {"folder": "no_such_dir"}))
    assert failed.error and failed.state_changed is False
    assert bridge.kind("cd") == "write"
    assert bridge.execute(RealCall("rm", {"file_name": "nothing_here"})).error
    assert bridge.kind("rm") == "write"


def test_declared_kinds_yield_to_observed_writes() -> None:
    task = _task()
    bridge = BfclRealTools(
        task.involved_classes, task.initial_config, declared_kinds={"mkdir": "read", "pwd": "read"}
    )
    assert bridge.kind("pwd") == "read"
    assert bridge.kind("mkdir") == "read"
    bridge.execute(RealCall("mkdir", {"dir_name": "x"}))
    assert bridge.kind("mkdir") == "write"


def test_errors_come_back_as_official_text() -> None:
    bridge = _bridge(_task())
    unknown = bridge.execute(RealCall("os.system", {"command": "true"}))
    assert unknown.error and unknown.content == "Error during execution: name 'os.system' is not defined"
    private = bridge.execute(RealCall("_load_scenario", {"scenario": {}}))
    assert private.error
    bad_args = bridge.execute(RealCall("cd", {"nope": 1}))
    assert bad_args.error and bad_args.content.startswith("Error during execution: ")
    assert "unexpected keyword argument 'nope'" in bad_args.content


def test_render_result_matches_the_official_rules() -> None:
    assert render_result("text") == "text"
    assert render_result({"a": 1}) == '{"a": 1}'
    assert render_result({"a": {1, 2}}) == "{'a': {1, 2}}"
    assert render_result([1, "x"]) == "[1, 'x']"
    assert render_result(None) == "None"


def test_classes_and_stateless_math() -> None:
    assert len(BFCL_CLASSES) == 9 and BFCL_CLASSES[-1] == "WebSearchAPI"  # the eight multi-turn ones, web_search's
    with pytest.raises(ValueError):
        load_tool_class("PostingAPI")
    bridge = BfclRealTools(["MathAPI"], {})
    result = bridge.execute(RealCall("mean", {"numbers": [1, 2, 3]}))
    assert result.content == '{"result": 2.0}' and not result.error and result.state_changed is False
