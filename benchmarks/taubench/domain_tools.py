"""The base of a domain's tools (`DomainTools`): tool declaration, the read/write kind, execution with official
result strings.

A domain's tools are a class whose public methods are decorated with `@tool(...)`. The methods
are plain Python callables with type hints and Google-style docstrings (the docstring is the tool
description the agent sees), so any callable-to-schema converter can turn them into a toolkit
document. Execution follows the tau2 environment contract:

- arguments are passed to the method as keyword arguments, unvalidated (the methods convert nested
  objects themselves, as the reference does), so a missing or unknown argument gives Python's own
  `TypeError` text;
- any exception becomes the content `"Error: <message>"` with `error=True`;
- a result is serialised the way tau2 serialises tool messages (`serialize_result`).
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel

from benchmarks.taubench.tasks import TaskSet

ToolType = Literal["read", "write", "generic"]
"""The official tau2 tool type: `write` tools mutate the DB; `generic` ones (calculator, transfer) do not."""

Kind = Literal["read", "write"]
"""Read/write kind as Gecko uses it (`x-gecko-access`): generic tools are reads."""

_TOOL_ATTR = "__taubench_tool__"
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ToolDeclaration:
    """What the `@tool` decorator records about one method.

    Attributes:
        tool_type: the official tool type.
        task_sets: task-set versions whose tools include this tool.
    """

    tool_type: ToolType
    task_sets: frozenset[str]


def tool(tool_type: ToolType, *, task_sets: tuple[TaskSet, ...] = ("v1", "v0")) -> Callable[[F], F]:
    """Mark a method of a `DomainTools` subclass as a tool.

    Args:
        tool_type: `read`, `write` (mutates the DB) or `generic` (neither reads nor writes the DB).
        task_sets: the task-set versions that expose the tool (retail's `get_item_details` is v1 only).

    Returns:
        A decorator that leaves the function unchanged apart from the recorded `ToolDeclaration`.
    """

    def mark(func: F) -> F:
        setattr(func, _TOOL_ATTR, ToolDeclaration(tool_type, frozenset(task_sets)))
        return func

    return mark


@dataclass(frozen=True)
class ToolOutcome:
    """The result of executing one tool call, as tau2 reports it to the agent.

    Attributes:
        content: the tool message content: the serialised result, or `"Error: <message>"`.
        error: whether the call raised.
    """

    content: str
    error: bool

    def json(self) -> Any:
        """The content parsed as JSON, or the raw string when it is not JSON (ids, error texts)."""
        try:
            return json.loads(self.content)
        except json.JSONDecodeError:
            return self.content


def _plain(value: Any) -> Any:
    """Turn a tool result into JSON-ready Python data with tau2's conventions."""
    if isinstance(value, BaseModel):
        return value.model_dump(warnings=False)
    if isinstance(value, (bool, int, float)):
        # tau2 reports scalars nested in containers as their `str()`.
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    raise ValueError(f"Unsupported type: {type(value)}")


def serialize_result(value: Any) -> str:
    """Serialise a tool's return value into tool-message content.

    Strings are passed through untouched (some tools return JSON text or plain ids); everything else
    is dumped as JSON after converting pydantic models with `model_dump()`.

    Args:
        value: what the tool method returned.

    Returns:
        The content string, byte-identical to what the tau2 reference environment produces.
    """
    if isinstance(value, str):
        return value
    return json.dumps(_plain(value), default=str)


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large acyclic tree is built.

    Validating or dumping a whole DB allocates some 10^5 containers without reference cycles; left
    running, the collector would scan every live object (cached DB JSON included) again and again
    for nothing, which costs about a third of the time. Reference counting still frees everything.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def db_hash(db: BaseModel) -> str:
    """The tau2 DB fingerprint: sha256 of the key-sorted JSON dump of the model.

    Args:
        db: a domain database model.

    Returns:
        A hex digest equal to tau2's `get_db_hash()` for the same content.
    """
    with no_cyclic_gc():
        text = json.dumps(db.model_dump(warnings=False), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class DomainTools:
    """Base class of a domain's tools over one live database.

    Subclasses declare tools with `@tool`. The set of tools is collected once per class.

    Attributes:
        db: the live database the tools read and mutate.
        task_set: the task-set version whose tool list this instance exposes.
    """

    _specs: ClassVar[dict[str, ToolDeclaration]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        specs: dict[str, ToolDeclaration] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                spec = getattr(member, _TOOL_ATTR, None)
                if spec is not None:
                    specs[name] = spec
        cls._specs = dict(sorted(specs.items()))

    def __init__(self, db: Any, task_set: TaskSet = "v1") -> None:
        self.db = db
        self.task_set = task_set

    @classmethod
    def declarations(cls, task_set: TaskSet = "v1") -> dict[str, ToolDeclaration]:
        """The tools of this kit in a task-set version, by name (sorted)."""
        return {name: spec for name, spec in cls._specs.items() if task_set in spec.task_sets}

    def names(self) -> list[str]:
        """Names of the tools this instance exposes, sorted."""
        return list(self.declarations(self.task_set))

    def callables(self) -> list[Callable[..., Any]]:
        """The exposed tools as bound methods (input for a callable-to-OpenAPI converter)."""
        return [getattr(self, name) for name in self.names()]

    def has_tool(self, name: str) -> bool:
        """Whether `name` is a tool of this instance's task set."""
        return name in self.declarations(self.task_set)

    def tool_type(self, name: str) -> ToolType:
        """The official type of a tool.

        Raises:
            KeyError: if there is no such tool.
        """
        return self.declarations(self.task_set)[name].tool_type

    def kind(self, name: str) -> Kind:
        """`write` for tools that mutate the DB, `read` for the rest (generic tools included).

        Raises:
            KeyError: if there is no such tool.
        """
        return "write" if self.tool_type(name) == "write" else "read"

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Run a tool and return its raw Python result.

        Args:
            name: tool name.
            arguments: keyword arguments, passed as they are.

        Raises:
            ValueError: `Tool '<name>' not found.` for an unknown name.
            Exception: whatever the tool raises.
        """
        if not self.has_tool(name):
            raise ValueError(f"Tool '{name}' not found.")
        return getattr(self, name)(**arguments)

    def execute(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Run a tool and report it as tau2 does: serialised content, or `Error: ...` on any exception.

        Args:
            name: tool name.
            arguments: keyword arguments (JSON-decoded tool-call arguments).

        Returns:
            The outcome; never raises for tool errors.
        """
        try:
            result = self.call(name, arguments)
        except Exception as exc:  # every tool failure is reported to the agent, as in tau2
            return ToolOutcome(content=f"Error: {exc}", error=True)
        return ToolOutcome(content=serialize_result(result), error=False)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
