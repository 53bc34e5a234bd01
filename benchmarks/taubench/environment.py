"""A domain at run time: fresh databases from cached JSON, and environments that execute tool calls.

`DomainRuntime` is built once per domain and task set and shared; `Environment` is one live
database (one conversation, one replay, one GATS rollout). Fresh databases are validated from the
parsed `db.json` kept by the `DataStore` (never deep-copied), and the pristine DB's fingerprint is
computed once: an environment that executed no write tool still has it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from benchmarks.taubench.domain_tools import DomainTools, Kind, ToolOutcome, ToolType, db_hash, no_cyclic_gc
from benchmarks.taubench.domains import DomainSpec, get_domain
from benchmarks.taubench.loader import DEFAULT_TASK_SET, DataStore
from benchmarks.taubench.messages import MessageToolCall, ToolMessage
from benchmarks.taubench.tasks import TaskSet

NO_USER_TOOLS = "User tools not available"
"""tau2's error for a user tool call in a domain without user tools (airline, retail)."""


@dataclass(frozen=True)
class WriteCall:
    """A write-tool call executed on an environment (kept to rebuild its state elsewhere)."""

    name: str
    arguments: dict[str, Any]


def canonical_writes(writes: Sequence[WriteCall]) -> str | None:
    """JSON text of a write sequence, or None if an argument is not JSON data.

    Equal texts mean equal names and equal argument values *and types* (`1` and `1.0` differ), so
    replaying them from the same state gives the same DB: the tools are deterministic.
    """
    try:
        return json.dumps([[write.name, write.arguments] for write in writes], sort_keys=True)
    except (TypeError, ValueError):
        return None


class DomainRuntime:
    """One domain in one task-set version: policy, tool kinds, fresh DBs and the pristine DB hash.

    Attributes:
        spec: the domain's DB model and tools class.
        store: where the verified data comes from.
        task_set: the task-set version (decides the tool list: retail v1 adds `get_item_details`).
    """

    def __init__(self, domain: str, store: DataStore, task_set: TaskSet = DEFAULT_TASK_SET) -> None:
        self.spec: DomainSpec = get_domain(domain)
        self.store = store
        self.task_set: TaskSet = task_set
        self._initial_hash: str | None = None
        # Fingerprint of the DB reached from the pristine one by a write sequence (canonical JSON).
        # The tools are deterministic, so the sequence determines the state. Grows by one short
        # entry per distinct sequence seen.
        self._hash_by_writes: dict[str, str] = {}

    @property
    def name(self) -> str:
        """The domain name."""
        return self.spec.name

    @property
    def policy(self) -> str:
        """The agent policy text."""
        return self.store.policy(self.name)

    def tool_names(self) -> list[str]:
        """The agent's tools, sorted by name."""
        return list(self.spec.tools.declarations(self.task_set))

    def tool_type(self, name: str) -> ToolType:
        """Official type of a tool (`read`, `write`, `generic`).

        Raises:
            KeyError: if there is no such tool.
        """
        return self.spec.tools.declarations(self.task_set)[name].tool_type

    def kind(self, name: str) -> Kind:
        """`write` if the tool mutates the DB, else `read`.

        Raises:
            KeyError: if there is no such tool.
        """
        return "write" if self.tool_type(name) == "write" else "read"

    def is_write(self, name: str) -> bool:
        """Whether `name` is a known tool that mutates the DB (unknown names are not)."""
        spec = self.spec.tools.declarations(self.task_set).get(name)
        return spec is not None and spec.tool_type == "write"

    def new_db(self) -> BaseModel:
        """A fresh, pristine database, validated from the cached `db.json`."""
        data = self.store.db_json(self.name)
        with no_cyclic_gc():
            return self.spec.db_model.model_validate(data)

    @property
    def initial_hash(self) -> str:
        """Fingerprint of the pristine database (computed once)."""
        if self._initial_hash is None:
            self._initial_hash = db_hash(self.new_db())
        return self._initial_hash

    def cached_hash(self, writes: Sequence[WriteCall]) -> str | None:
        """The fingerprint after `writes`, if already known (no writes: the pristine one)."""
        if not writes:
            return self.initial_hash
        key = canonical_writes(writes)
        return None if key is None else self._hash_by_writes.get(key)

    def remember_hash(self, writes: Sequence[WriteCall], digest: str) -> None:
        """Record the fingerprint of the DB reached by `writes` from the pristine one."""
        key = canonical_writes(writes)
        if key is not None:
            self._hash_by_writes[key] = digest

    def hash_after(self, writes: Sequence[WriteCall]) -> str:
        """Fingerprint of the DB after replaying `writes` on a pristine one (computed once per sequence).

        Grading many trials of a task replays its gold actions once.
        """
        cached = self.cached_hash(writes)
        return cached if cached is not None else self.replay(writes).db_hash()

    def environment(self) -> Environment:
        """A new environment over a pristine database (built on first use)."""
        return Environment(self)

    def replay(self, writes: Iterable[WriteCall | tuple[str, Mapping[str, Any]]]) -> Environment:
        """A new environment with the given write calls executed in order; their errors are ignored.

        Args:
            writes: write calls, as `WriteCall`s or `(name, arguments)` pairs. Calls to read or
                unknown tools are skipped.

        Returns:
            The environment after the replay.
        """
        env = Environment(self)
        for call in writes:
            name, arguments = (call.name, call.arguments) if isinstance(call, WriteCall) else call
            if self.is_write(name):
                env.execute(name, arguments)
        return env


class Environment:
    """A domain's tools over one live database.

    Mutate the database only through `execute`/`respond`: the environment relies on its write log
    to know whether the DB is still pristine and to `fork` itself.
    """

    def __init__(self, runtime: DomainRuntime) -> None:
        self.runtime = runtime
        self._tools: DomainTools | None = None
        self._writes: list[WriteCall] = []

    @property
    def tools(self) -> DomainTools:
        """The domain tools over the live DB (the DB is validated on first access)."""
        if self._tools is None:
            self._tools = self.runtime.spec.tools(self.runtime.new_db(), self.runtime.task_set)
        return self._tools

    @property
    def db(self) -> Any:
        """The live database model."""
        return self.tools.db

    @property
    def writes(self) -> tuple[WriteCall, ...]:
        """Write calls executed so far, in order (failed ones included: they may mutate too)."""
        return tuple(self._writes)

    def tool_names(self) -> list[str]:
        """The agent's tools, sorted by name."""
        return self.runtime.tool_names()

    def kind(self, name: str) -> Kind:
        """`write` if the tool mutates the DB, else `read`.

        Raises:
            KeyError: if there is no such tool.
        """
        return self.runtime.kind(name)

    def execute(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Execute one agent tool call on the live DB.

        Args:
            name: tool name (unknown names give tau2's `Error: Tool '<name>' not found.`).
            arguments: keyword arguments, as decoded from the call.

        Returns:
            The official content string and error flag; tool errors never raise.
        """
        if self.runtime.is_write(name):
            self._writes.append(WriteCall(name, copy.deepcopy(dict(arguments))))
        return self.tools.execute(name, arguments)

    def respond(self, call: MessageToolCall) -> ToolMessage:
        """Answer a tool call with a tool message, as tau2's environment does.

        A user-requested call fails: airline and retail have no user tools.
        """
        if call.requestor == "user":
            outcome = ToolOutcome(content=f"Error: {NO_USER_TOOLS}", error=True)
        else:
            outcome = self.execute(call.name, call.arguments)
        return ToolMessage(id=call.id, content=outcome.content, requestor=call.requestor, error=outcome.error)

    def db_hash(self) -> str:
        """tau2's fingerprint of the live DB.

        Reused from the runtime when its write log was fingerprinted before (the pristine DB's when
        no write ran); otherwise computed and remembered there.
        """
        cached = self.runtime.cached_hash(self._writes)
        if cached is not None:
            return cached
        digest = db_hash(self.db)
        self.runtime.remember_hash(self._writes, digest)
        return digest

    def fork(self) -> Environment:
        """An independent environment in the same state, rebuilt by replaying the write log."""
        return self.runtime.replay(self._writes)
