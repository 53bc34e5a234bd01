"""Real tools for BFCL multi-turn: the eight tool classes shipped in `bfcl-eval`, one set of instances per task.

Instances are built here, not through the official `execute_multi_turn_func_call` (which caches them in its
module globals and `eval`s call text): each `BfclRealTools` owns fresh instances, loaded like the official
executor loads them (`cls()`, then `_load_scenario(deepcopy(initial_config.get(cls, {})), long_context=...)`
except for the stateless `MathAPI`). Calls are dispatched by method name with keyword arguments that were
parsed as literals elsewhere; they are deep-copied so a tool never shares objects with the caller.

Results are rendered as the official executor renders them: a `str` as is, a `dict` through `json.dumps`
(`str` if that fails), anything else through `str`, and an exception as `"Error during execution: <msg>"`.
An unknown name gives the text the official `eval` would produce (`name 'x' is not defined`), unexecuted.

Read/write kind is derived by observation: before each call the owning instance's attributes (public and
private, e.g. GorillaFileSystem's current directory; random-number generators excluded, since reads such as
`get_outside_temperature_from_google` draw from them) are deep-copied, and compared with `==` afterwards.
A tool seen changing state is `write` from then on. A tool is `read` once it succeeded (no exception, no
`"error"` key in a dict result) without changing state and was never seen writing; a tool that was never
observed is `write`, the safe answer. Declared kinds (e.g. from a toolkit's `x-default-state`) can be
passed in; an observed write always overrides a declared `read`. Observation is per backend, so a tool
that wrote nothing in one call (`cd('.')`) may be reported `read` until a call shows otherwise.

Upstream quirk: in long-context mode `VehicleControlAPI.get_outside_temperature_from_google` returns a
module-level dict of `bfcl-eval` that it mutates; it is rendered to text immediately, but two threads doing
this at once could see each other's value.
"""

from __future__ import annotations

import copy
import inspect
import json
import random
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES

from benchmarks.bfcl.sentence_standin import import_tool_module
from inference.tools import Access, RealCall, RealResult, RealTools

BFCL_CLASSES: tuple[str, ...] = (
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
    "WebSearchAPI",
)
"""The multi-turn tool classes (posting_api.py holds `TwitterAPI`, travel_booking.py holds `TravelAPI`) and the
web_search categories' `WebSearchAPI` (SerpAPI and real page fetches: it needs `SERPAPI_API_KEY`)."""
MEMORY_CLASSES: tuple[str, ...] = ("MemoryAPI_kv", "MemoryAPI_vector", "MemoryAPI_rec_sum")
"""The memory categories' classes, one per backend (`memory_run.py` gives each instance its snapshot directory);
`MemoryAPI_vector` is imported with Gecko's sentence-transformers stand-in where that package is not installed
(`sentence_standin.py`)."""


def load_tool_class(class_name: str) -> type:
    """The tool class of `bfcl-eval` with this name.

    Raises:
        ValueError: `class_name` is not one of `BFCL_CLASSES`.
    """
    if class_name not in BFCL_CLASSES + MEMORY_CLASSES:
        raise ValueError(f"unknown BFCL tool class {class_name!r}; known: {', '.join(BFCL_CLASSES + MEMORY_CLASSES)}")
    module = import_tool_module(CLASS_FILE_PATH_MAPPING[class_name])
    return getattr(module, class_name)


def render_result(value: Any) -> str:
    """Render a tool's return value exactly as the official multi-turn executor does."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def _state(instance: object) -> dict[str, Any]:
    return {k: v for k, v in vars(instance).items() if not isinstance(v, random.Random)}


class BfclRealTools(RealTools):
    """The real tool instances of one BFCL multi-turn task.

    Args:
        involved_classes: Classes of the task, e.g. `("TwitterAPI", "GorillaFileSystem")`.
        initial_config: The task's `initial_config` (`{ClassName: scenario}`); it is deep-copied.
        long_context: Load the long-context extensions (the `multi_turn_long_context` category).
        declared_kinds: Known read/write kinds by tool name, refined by observation.

    Raises:
        ValueError: An involved class is not a BFCL tool class.
    """

    def __init__(
        self,
        involved_classes: Sequence[str],
        initial_config: Mapping[str, Any],
        *,
        long_context: bool = False,
        declared_kinds: Mapping[str, Access] | None = None,
    ) -> None:
        self._instances: dict[str, object] = {}
        self._methods: dict[str, tuple[str, Callable[..., Any]]] = {}
        for class_name in involved_classes:
            instance = load_tool_class(class_name)()
            if class_name not in STATELESS_CLASSES:
                scenario = copy.deepcopy(dict(initial_config).get(class_name, {}))
                instance._load_scenario(scenario, long_context=long_context)
            self._instances[class_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self._methods[name] = (class_name, method)
        self._declared: dict[str, Access] = dict(declared_kinds or {})
        self._seen_write: set[str] = set()
        self._seen_read: set[str] = set()

    @property
    def instances(self) -> Mapping[str, object]:
        """The live instances by class name (read-only mapping; for state checks and syncing)."""
        return MappingProxyType(self._instances)

    def tool_names(self) -> tuple[str, ...]:
        """Public method names of the involved classes."""
        return tuple(self._methods)

    def class_of(self, tool: str) -> str | None:
        """The class that owns `tool`, or None for an unknown name."""
        entry = self._methods.get(tool)
        return None if entry is None else entry[0]

    def execute(self, call: RealCall) -> RealResult:
        """Call the method named `call.name` with deep copies of `call.arguments` as keyword arguments."""
        entry = self._methods.get(call.name)
        if entry is None:
            return RealResult(
                f"Error during execution: name '{call.name}' is not defined", error=True, state_changed=False
            )
        class_name, method = entry
        instance = self._instances[class_name]
        before = copy.deepcopy(_state(instance))
        try:
            value = method(**copy.deepcopy(dict(call.arguments)))
        except Exception as exc:  # the official executor turns every tool exception into a result
            content, failed = f"Error during execution: {exc}", True
        else:
            content, failed = render_result(value), isinstance(value, dict) and "error" in value
        changed = _state(instance) != before
        if changed:
            self._seen_write.add(call.name)
        elif not failed:
            self._seen_read.add(call.name)
        return RealResult(content=content, error=failed, state_changed=changed)

    def kind(self, tool: str) -> Access:
        """`write` if seen changing state or declared `write`; `read` if declared or seen reading; else `write`."""
        if tool in self._seen_write or self._declared.get(tool) == "write":
            return "write"
        if tool in self._seen_read or self._declared.get(tool) == "read":
            return "read"
        return "write"
