"""The official BFCL checkers (`bfcl-eval` AST and multi-turn), wrapped so they are safe and cheap to use.

AST checker and the `model_config` stub: `ast_checker.py` imports `bfcl_eval.constants.model_config`, which
imports every vendor SDK (seconds of start-up and dozens of packages we do not install). It only reads
`MODEL_CONFIG_MAPPING[model].underscore_to_dot`, for dotted function names. We load our own copy of the
official `ast_checker` module from its file, under a private name that is never put in `sys.modules`,
while a stub `model_config` (a mapping that answers `underscore_to_dot=False`, i.e. dotted names stay dotted)
sits in `sys.modules` for the duration of that one import. Afterwards the previous `sys.modules` entry (none,
or the real module) is restored, so any other import of `bfcl_eval.constants.model_config` or of
`bfcl_eval.eval_checker.ast_eval.ast_checker` in the process gets the real, unstubbed module.

Multi-turn checker: `multi_turn_checker` executes calls through `execute_multi_turn_func_call`, which caches
tool instances in its module globals keyed by model name and entry id, and runs `eval` on the call strings.
Every check here uses a fresh unique model name and deletes that name's cached instances afterwards, and
only call strings we rendered ourselves from literal-only parses, with names from the entry's func docs,
ever reach it.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import re
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

from benchmarks.bfcl.languages import CallLanguage
from benchmarks.bfcl.loader import FunctionDoc, GroundTruthCall, MultiTurnTask
from benchmarks.bfcl.parse import FunctionCall, calls_to_dicts, format_call

_AST_CHECKER = "bfcl_eval.eval_checker.ast_eval.ast_checker"
_MODEL_CONFIG = "bfcl_eval.constants.model_config"
_PRIVATE_AST_CHECKER = "benchmarks.bfcl._official_ast_checker"
_LANGUAGES = {"python": Language.PYTHON, "java": Language.JAVA, "javascript": Language.JAVASCRIPT}
_CHECKER_MODEL_NAME = "gecko-eval"
"""Model name given to the AST checker; with the stub, any name means "keep dotted function names"."""


@dataclass(frozen=True)
class CheckResult:
    """Verdict of an official checker for one entry."""

    valid: bool
    error_type: str | None = None
    """Official error type, e.g. `value_error:others` or `multi_turn:instance_state_mismatch`."""
    errors: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _StubModelConfig:
    underscore_to_dot: bool = False


class _StubModelConfigMapping(dict[str, _StubModelConfig]):
    def __missing__(self, key: str) -> _StubModelConfig:
        return _StubModelConfig()


def _stub_model_config() -> ModuleType:
    module = ModuleType(_MODEL_CONFIG, "Stub of bfcl_eval.constants.model_config for the AST checker.")
    # A module built here: the checker cannot know its attributes.
    module.MODEL_CONFIG_MAPPING = _StubModelConfigMapping()  # type: ignore[attr-defined]
    return module


@functools.cache
def official_ast_checker_module() -> ModuleType:
    """The official `ast_checker` module, loaded once under a private name with the stub in place.

    Raises:
        ImportError: `bfcl-eval` is not installed.
    """
    spec = importlib.util.find_spec(_AST_CHECKER)
    if spec is None or spec.origin is None:
        raise ImportError(f"{_AST_CHECKER} not found; install bfcl-eval==2026.3.23 with --no-deps")
    private_spec = importlib.util.spec_from_file_location(_PRIVATE_AST_CHECKER, spec.origin)
    assert private_spec is not None and private_spec.loader is not None
    module = importlib.util.module_from_spec(private_spec)
    previous = sys.modules.get(_MODEL_CONFIG)
    sys.modules[_MODEL_CONFIG] = _stub_model_config()
    try:
        private_spec.loader.exec_module(module)
    finally:
        if previous is None:
            sys.modules.pop(_MODEL_CONFIG, None)
        else:
            sys.modules[_MODEL_CONFIG] = previous
    return module


def _result(raw: Mapping[str, Any]) -> CheckResult:
    if raw.get("valid"):
        return CheckResult(valid=True)
    errors = raw.get("error", raw.get("error_message", ()))
    errors = (errors,) if isinstance(errors, str) else tuple(str(e) for e in errors)
    details = {k: v for k, v in raw.items() if k not in {"valid", "error", "error_message", "error_type"}}
    return CheckResult(valid=False, error_type=raw.get("error_type"), errors=errors, details=details)


def check_ast(
    functions: Sequence[FunctionDoc],
    calls: Sequence[FunctionCall],
    ground_truth: Sequence[GroundTruthCall],
    category: str,
    language: CallLanguage = "python",
) -> CheckResult:
    """Score single-turn calls with the official `ast_checker`.

    Args:
        functions: The entry's function docs.
        calls: The decoded model calls (dotted names kept dotted).
        ground_truth: The entry's `ground_truth` list.
        category: The category; the checker picks simple/multiple/parallel from its name.
        language: The language rules (`call_language(category)`): Java/JavaScript arguments are strings of
            source, converted by the declared type.
    """
    checker = official_ast_checker_module().ast_checker
    raw = checker(
        copy.deepcopy(list(functions)),
        calls_to_dicts(calls),
        copy.deepcopy(list(ground_truth)),
        _LANGUAGES[language],
        category,
        _CHECKER_MODEL_NAME,
    )
    return _result(raw)


def _instance_prefix(model_name: str) -> str:
    return re.sub(r"[-./:]", "_", model_name) + "_"


def clear_instance_cache(model_name: str) -> int:
    """Drop the tool instances the official executor cached under `model_name`; returns how many."""
    namespace = vars(multi_turn_utils)
    prefix = _instance_prefix(model_name)
    stale = [key for key in namespace if key.startswith(prefix) and key.endswith("_instance")]
    for key in stale:
        del namespace[key]
    return len(stale)


def check_multi_turn(task: MultiTurnTask, steps: Sequence[Sequence[Sequence[FunctionCall]]]) -> CheckResult:
    """Score multi-turn calls with the official `multi_turn_checker`.

    Args:
        task: The entry (its id, category, initial config, involved classes and ground truth are used).
        steps: Per turn, per model step, the calls of that step. Names must already be checked against the
            entry's function docs; the checker executes what it is given.
    """
    decoded = [[[format_call(call) for call in step] for step in turn] for turn in steps]
    entry = {
        "id": task.id,
        "initial_config": copy.deepcopy(dict(task.initial_config)),
        "involved_classes": list(task.involved_classes),
    }
    model_name = f"gecko_{uuid.uuid4().hex}"
    try:
        raw = multi_turn_checker(
            decoded, [list(turn) for turn in task.ground_truth], entry, task.category, model_name
        )
    finally:
        clear_instance_cache(model_name)
    return _result(raw)
