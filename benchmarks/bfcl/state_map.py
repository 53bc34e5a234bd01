"""BFCL's multi-turn tool-class state in Gecko's representation: one JSON object per class.

The state of an instance is its public attributes (the ones BFCL's own state checker compares), made
JSON-serialisable: file-system `Directory`/`File` objects become the scenario format of `initial_config`
(`{"root": {"<name>": {"type": "directory", "contents": {…}}}}`, `{"type": "file", "content": …}`), integer dict
keys become strings, sets become sorted lists. GorillaFileSystem also records `current_directory` (what `pwd()`
reports), since `cd` changes what later calls see.

This one mapping gives the class toolkits their `x-gecko-default-state` (`scripts/bfcl_multi_turn.py`) and the
fidelity harness the real state to compare Gecko's with (`benchmarks/bfcl/fidelity.py`): a Gecko session's state
holds each involved class under its toolkit name (the class name).
"""

from __future__ import annotations

import json
from typing import Any


def to_json(value: Any) -> Any:
    """A JSON-serialisable copy of an attribute value (see the module docstring).

    Raises:
        TypeError: A value with no JSON form.
    """
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_json(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    kind = type(value).__name__
    if kind == "Directory":
        return {"type": "directory", "contents": {name: to_json(item) for name, item in value.contents.items()}}
    if kind == "File":
        return {"type": "file", "content": value.content}
    raise TypeError(f"no JSON form for a {kind} in an instance's state")


def instance_state(instance: object) -> dict[str, Any]:
    """The JSON state of a tool-class instance."""
    state = {
        name: {value.name: to_json(value)} if type(value).__name__ == "Directory" else to_json(value)
        for name, value in sorted(vars(instance).items())
        if not name.startswith("_")
    }
    if hasattr(instance, "_current_dir") and hasattr(instance, "pwd"):
        state["current_directory"] = instance.pwd()["current_working_directory"]
    return state
