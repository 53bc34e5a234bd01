"""Scoring through the official checkers: oracle pass rates, failure types, irrelevance, isolation."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from benchmarks.bfcl.categories import MULTI_TURN_CATEGORIES, SINGLE_TURN_CATEGORIES
from benchmarks.bfcl.checker import clear_instance_cache, official_ast_checker_module
from benchmarks.bfcl.export import multi_turn_result, single_turn_result
from benchmarks.bfcl.languages import call_language
from benchmarks.bfcl.loader import MultiTurnTask, SingleTurnTask, load_category
from benchmarks.bfcl.oracle import multi_turn_oracle_calls, single_turn_oracle_calls
from benchmarks.bfcl.scoring import score_entry, score_multi_turn, score_single_turn
from benchmarks.bfcl.source_calls import format_source_calls

REPO_ROOT = Path(__file__).resolve().parents[2]

DATA_BUG_IDS = {
    "live_simple_106-63-0",
    "live_simple_112-68-0",
    "live_multiple_507-149-4",
    "live_multiple_862-181-3",
    "live_multiple_964-207-0",
    "simple_java_36",
    "simple_java_65",
}
"""Entries no output can pass (research/bfcl_eval.md §3): empty allowed lists or params outside the schema; in
simple_java an `ArrayList` of `any` whose ground truth holds numbers (the official converter reads its items as strings)."""


_tasks = functools.cache(load_category)


def _single(task_id: str) -> SingleTurnTask:
    category = task_id.rsplit("_", 1)[0]
    task = next(t for t in _tasks(category) if t.id == task_id)
    assert isinstance(task, SingleTurnTask)
    return task


def _multi(task_id: str) -> MultiTurnTask:
    category = task_id.rsplit("_", 1)[0]
    task = next(t for t in _tasks(category) if t.id == task_id)
    assert isinstance(task, MultiTurnTask)
    return task


def test_single_turn_oracle_passes_all_but_the_data_bugs() -> None:
    failed: set[str] = set()
    for category in SINGLE_TURN_CATEGORIES:
        for task in load_category(category):
            assert isinstance(task, SingleTurnTask)
            calls = single_turn_oracle_calls(task)
            language = call_language(category)
            text = single_turn_result(calls) if language == "python" else format_source_calls(
                calls, task.functions, language)
            if not score_single_turn(task, text).valid:
                failed.add(task.id)
    assert failed == DATA_BUG_IDS


@pytest.mark.parametrize("category", MULTI_TURN_CATEGORIES)
def test_multi_turn_oracle_passes_everything(category: str) -> None:
    failed = []
    for task in load_category(category):
        assert isinstance(task, MultiTurnTask)
        result = multi_turn_result([[turn] for turn in multi_turn_oracle_calls(task)])
        score = score_multi_turn(task, result)
        if not score.valid:
            failed.append((task.id, score.error_type))
    assert failed == []


@pytest.mark.parametrize(
    ("result", "error_type"),
    [
        ("[calculate_triangle_area(base=11, height=5)]", "value_error:others"),
        ("[calculate_triangle_area(base='10', height=5)]", "type_error:simple"),
        ("[calculate_triangle_area(base=10)]", "simple_function_checker:missing_required"),
        (
            "[calculate_triangle_area(base=10, height=5, color='red')]",
            "simple_function_checker:unexpected_param",
        ),
        ("[area(base=10, height=5)]", "simple_function_checker:wrong_func_name"),
        (
            "[calculate_triangle_area(base=10, height=5), calculate_triangle_area(base=10, height=5)]",
            "simple_function_checker:wrong_count",
        ),
        ("The area is 25.", "ast_decoder:decoder_failed"),
        ("[calculate_triangle_area(base=10, height=__import__('os').getpid())]", "ast_decoder:refused"),
    ],
)
def test_wrong_single_turn_outputs(result: str, error_type: str) -> None:
    score = score_single_turn(_single("simple_python_0"), result)
    assert not score.valid
    assert score.error_type == error_type


def test_correct_outputs_in_both_result_forms() -> None:
    task = _single("simple_python_0")
    assert score_single_turn(task, "[calculate_triangle_area(base=10, height=5, unit='units')]").valid
    assert score_single_turn(task, [{"calculate_triangle_area": '{"base": 10, "height": 5}'}]).valid
    assert score_single_turn(task, [{"calculate_triangle_area": {"base": 10, "height": 5}}]).valid
    assert score_single_turn(_single("simple_python_1"), "[math.factorial(number=5)]").valid


@pytest.mark.parametrize(
    ("result", "valid"),
    [
        ("I can't compute that with the tools I have.", True),
        ("[]", True),
        ([], True),
        (None, True),
        ("[determine_body_mass_index(weight=70, height=1.75)]", False),
        ([{"determine_body_mass_index": '{"weight": 70}'}], False),
        ("[determine_body_mass_index(weight=w)]", False),
    ],
)
def test_irrelevance_is_correct_iff_no_call(result: object, valid: bool) -> None:
    assert score_single_turn(_single("irrelevance_0"), result).valid is valid


def test_multi_turn_structural_failures() -> None:
    task = _multi("multi_turn_base_0")
    assert score_multi_turn(task, "[cd(folder='document')]").error_type == "multi_turn:inference_error"
    assert score_multi_turn(task, [[]]).error_type == "multi_turn:force_terminated"


def test_multi_turn_unknown_names_are_not_executed(tmp_path: Path) -> None:
    task = _multi("multi_turn_base_0")
    marker = tmp_path / "pwned"
    gold = multi_turn_result([[turn] for turn in multi_turn_oracle_calls(task)])
    attack = [f"[open(file={str(marker)!r}, mode='w')]", "[exit()]", "[__import__(name='os')]"]
    score = score_multi_turn(task, [attack, *gold[1:]])
    assert not score.valid
    assert score.error_type == "multi_turn:empty_turn_model_response"
    assert not marker.exists()


def test_prose_steps_are_skipped_like_the_official_runner() -> None:
    task = _multi("multi_turn_base_0")
    gold = multi_turn_result([[turn] for turn in multi_turn_oracle_calls(task)])
    with_prose = [[*turn, "Done, the file has been moved."] for turn in gold]
    assert score_multi_turn(task, with_prose).valid


def test_no_state_leaks_between_checks() -> None:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    task = _multi("multi_turn_base_0")
    gold = multi_turn_result([[turn] for turn in multi_turn_oracle_calls(task)])
    broken = [[gold[0][0].replace("mkdir(dir_name='temp'), ", "")], *gold[1:]]
    assert score_multi_turn(task, broken).error_type == "multi_turn:instance_state_mismatch"
    assert score_multi_turn(task, gold).valid
    assert score_multi_turn(task, broken).valid is False
    assert not [key for key in vars(multi_turn_utils) if key.startswith("gecko_")]
    assert clear_instance_cache("gecko_nothing_here") == 0


def test_score_entry_dispatches_on_task_kind() -> None:
    assert score_entry(_single("irrelevance_0"), "no").valid
    assert not score_entry(_multi("multi_turn_base_0"), []).valid


def test_stub_is_restored_when_the_real_module_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    sentinel = ModuleType("bfcl_eval.constants.model_config")
    monkeypatch.setitem(sys.modules, "bfcl_eval.constants.model_config", sentinel)
    module = official_ast_checker_module.__wrapped__()
    assert sys.modules["bfcl_eval.constants.model_config"] is sentinel
    assert module.MODEL_CONFIG_MAPPING["any/model"].underscore_to_dot is False


def test_checker_import_leaves_no_trace() -> None:
    """In a fresh interpreter: no stub, no vendor SDKs, no eval_config (which mkdirs in site-packages)."""
    script = """
import sys, pathlib, bfcl_eval
from benchmarks.bfcl.loader import load_category
from benchmarks.bfcl.oracle import single_turn_oracle_calls
from benchmarks.bfcl.scoring import score_single_turn
task = load_category("multiple")[0]
assert score_single_turn(task, [{c.name: c.arguments} for c in single_turn_oracle_calls(task)]).valid
site = pathlib.Path(bfcl_eval.__file__).parent.parent
loaded = set(sys.modules)
bad = {"bfcl_eval.constants.model_config", "bfcl_eval.constants.eval_config", "bfcl_eval.utils",
       "bfcl_eval.eval_checker.ast_eval.ast_checker", "benchmarks.bfcl._official_ast_checker", "openai", "anthropic"}
print(sorted(bad & loaded), [n for n in ("result", "score", ".file_locks") if (site / n).exists()])
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[] []"


def test_multi_turn_function_calling_steps() -> None:
    task = _multi("multi_turn_base_0")
    gold = multi_turn_oracle_calls(task)
    as_fc = [[[{c.name: json.dumps(c.arguments)} for c in turn]] for turn in gold]
    assert score_multi_turn(task, as_fc).valid
    unwritable = [[[{"cd": '{"folder": NaN}'}], *as_fc[0]], *as_fc[1:]]
    assert score_multi_turn(task, unwritable).valid


def test_memory_classes_and_loaders_keep_bfcl_files_out_of_site_packages() -> None:
    """bfcl-eval's config makes result/, score/ and .file_locks/ under its project root when imported (by the memory
    classes' metaclass and `bfcl_eval.utils`); that root must never be site-packages (read-only in an install)."""
    script = """
import os, pathlib, bfcl_eval
os.environ.pop("BFCL_PROJECT_ROOT", None)
from benchmarks.bfcl.real_tools import load_tool_class
from benchmarks.bfcl.memory import load_memory_tasks
load_tool_class("MemoryAPI_kv")
assert load_memory_tasks("memory_kv")
from bfcl_eval.constants import eval_config
site = pathlib.Path(bfcl_eval.__file__).parent.parent
print(eval_config.PROJECT_ROOT.resolve() != site.resolve())
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, check=True,
                          env={k: v for k, v in os.environ.items() if k != "BFCL_PROJECT_ROOT"})
    assert done.stdout.strip() == "True"
