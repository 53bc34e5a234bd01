"""State and read/write kind of BFCL's multi-turn tool classes, found by running them.

**State** of an instance: `benchmarks.bfcl.state_map.instance_state` (its public attributes as JSON; the
same mapping the fidelity harness compares Gecko's state with).

**Access** (`x-gecko-access`) is derived dynamically, by running the methods and comparing the
state before and after each call; a method that changed the state in any call is a write, the
others are reads. Two kinds of calls are observed:

1. the ground truth of every multi_turn_base task, replayed in order on a fresh instance of the
   class loaded with the task's initial config (each call at the state it was written for);
2. probes of every method not yet seen writing, on copies of the distinct states met in (1) and the
   default state, with: its ground-truth arguments, a call filled in from its doc (required
   parameters only: first enum value or a sample per type) and, for methods absent from the
   ground truth, one parameter at a time, short strings and integers found in that state (so
   `unfollow_user` meets a user who is actually followed).
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bfcl_source import multi_turn_class

from benchmarks.bfcl.state_map import instance_state

Access = Literal["read", "write"]
MAX_PROBE_STATES = 48
"""Distinct states probed per class (first ones met along the ground-truth traces)."""
MAX_GT_ARGS = 8
"""Ground-truth argument sets tried per method."""
MAX_STATE_VALUES = 16
"""Values harvested from a state per parameter."""
SAMPLES: dict[str, Any] = {
    "string": "test", "integer": 1, "float": 1.5, "boolean": True, "array": [], "tuple": [], "dict": {}, "any": "test",
}


def new_instance(class_name: str, scenario: dict[str, Any]) -> object:
    """A fresh instance with `scenario` loaded, as BFCL's executor builds one."""
    instance = multi_turn_class(class_name)()
    if hasattr(instance, "_load_scenario"):
        instance._load_scenario(copy.deepcopy(scenario), long_context=False)
    return instance


def default_state(class_name: str) -> dict[str, Any]:
    """State after loading an empty scenario."""
    return instance_state(new_instance(class_name, {}))


def _parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain call: {text!r}")
    return (
        node.func.id,
        [ast.literal_eval(a) for a in node.args],
        {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg},
    )


@dataclass
class _ClassProbe:
    """What the replay of one class's ground truth collected: arguments per method, distinct states."""

    class_name: str
    gt_args: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    states: dict[str, object] = field(default_factory=dict)

    def bind(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        signature = inspect.signature(getattr(multi_turn_class(self.class_name), name))
        bound = signature.bind(None, *args, **kwargs).arguments
        bound.pop(next(iter(signature.parameters)))
        return dict(bound)

    def remember(self, instance: object) -> None:
        key = json.dumps(instance_state(instance), sort_keys=True)
        if key not in self.states and len(self.states) < MAX_PROBE_STATES:
            self.states[key] = copy.deepcopy(instance)


def _filled_args(doc: dict[str, Any]) -> dict[str, Any]:
    params = doc["parameters"].get("properties", {})
    args = {}
    for name in doc["parameters"].get("required", []):
        spec = params.get(name, {})
        args[name] = spec["enum"][0] if spec.get("enum") else SAMPLES.get(spec.get("type", "any"), "test")
    return args


def _harvest(state: Any, kind: type, found: list[Any]) -> None:
    if isinstance(state, dict):
        for key, value in state.items():
            if kind is str:
                found.append(key)
            _harvest(value, kind, found)
    elif isinstance(state, list):
        for value in state:
            _harvest(value, kind, found)
    elif isinstance(state, kind) and not isinstance(state, bool):
        found.append(state)


def _state_values(state: dict[str, Any], gorilla_type: str) -> list[Any]:
    kind = {"string": str, "integer": int}.get(gorilla_type)
    if kind is None:
        return []
    found: list[Any] = []
    _harvest(state, kind, found)
    short = sorted({v for v in found if not isinstance(v, str) or 0 < len(v) <= 40}, key=str)
    return short[:MAX_STATE_VALUES]


def _candidates(doc: dict[str, Any], gt: list[dict[str, Any]], state: dict[str, Any]) -> Iterable[dict[str, Any]]:
    yield from gt[:MAX_GT_ARGS]
    base = _filled_args(doc)
    yield base
    if gt:
        return
    params = doc["parameters"].get("properties", {})
    for name in doc["parameters"].get("required", []):
        for value in _state_values(state, params.get(name, {}).get("type", "")):
            yield {**base, name: value}


def _changes_state(instance: object, method: str, args: dict[str, Any], before: dict[str, Any]) -> bool:
    try:
        getattr(instance, method)(**args)
    except Exception:  # a probe may fail; only its effect on the state matters
        pass
    return instance_state(instance) != before


Task = tuple[dict[str, Any], list[list[str]]]
"""A multi_turn_base entry and its ground-truth calls per turn."""


def derive_access(class_name: str, docs: list[dict[str, Any]], tasks: Sequence[Task]) -> dict[str, Access]:
    """Read/write kind of every documented method of one class (see the module docstring).

    Args:
        class_name: the tool class, e.g. `GorillaFileSystem`.
        docs: its function docs (`multi_turn_func_doc`).
        tasks: the multi_turn_base entries with their ground truth (`bfcl_source.multi_turn_tasks()`).
    """
    probe = _ClassProbe(class_name)
    owned = {d["name"] for d in docs}
    writes: set[str] = set()
    probe.remember(new_instance(class_name, {}))
    for entry, turns in tasks:
        if class_name not in entry["involved_classes"]:
            continue
        instance = new_instance(class_name, entry["initial_config"].get(class_name, {}))
        probe.remember(instance)
        for call in (c for turn in turns for c in turn):
            name, args, kwargs = _parse_call(call)
            if name not in owned:
                continue
            bound = probe.bind(name, args, kwargs)
            if bound not in probe.gt_args.setdefault(name, []):
                probe.gt_args[name].append(bound)
            if _changes_state(instance, name, bound, instance_state(instance)):
                writes.add(name)
            probe.remember(instance)
    for doc in docs:
        name = doc["name"]
        for original in probe.states.values():
            if name in writes:
                break
            before = instance_state(original)
            work = copy.deepcopy(original)
            for candidate in _candidates(doc, probe.gt_args.get(name, []), before):
                if _changes_state(work, name, candidate, before):
                    writes.add(name)
                    break
    return {doc["name"]: "write" if doc["name"] in writes else "read" for doc in docs}
