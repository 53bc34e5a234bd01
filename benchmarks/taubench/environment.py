"""A domain at run time: fresh databases from cached JSON, and environments that execute tool calls.

`DomainRuntime` is built once per domain and task set and shared; `Environment` is one live
database (one conversation, one replay, one GATS rollout). Fresh databases are validated from the
parsed `db.json` kept by the `DataStore` (never deep-copied), and the pristine DB's fingerprint is
computed once: an environment that executed no write tool still has it.

A dual-control domain (telecom) adds the user's own state and tools: an environment then also holds the user DB,
runs the task's set-up functions (`initial_state.initialization_actions`) when it is built, executes the user's tool
calls, and keeps both sides consistent (the domain's `sync`) after every successful call, as tau2's `get_response`
does. Its write log holds the user's writes too, so a fork replays set-up and both sides' writes.
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
from benchmarks.taubench.tasks import EnvAssertion, EnvFunctionCall, InitialState, TaskSet

NO_USER_TOOLS = "User tools not available"
"""tau2's error for a user tool call in a domain without user tools (airline, retail)."""


@dataclass(frozen=True)
class WriteCall:
    """A write-tool call executed on an environment (kept to rebuild its state elsewhere).

    `requestor` is `user` for a write by the user's own tools (dual control).
    """

    name: str
    arguments: dict[str, Any]
    requestor: str = "assistant"


def canonical_writes(writes: Sequence[WriteCall]) -> str | None:
    """JSON text of a write sequence, or None if an argument is not JSON data.

    Equal texts mean equal names and equal argument values *and types* (`1` and `1.0` differ), so
    replaying them from the same state gives the same DB: the tools are deterministic.
    """
    try:
        return json.dumps(
            [[write.name, write.arguments] + ([write.requestor] if write.requestor != "assistant" else []) for write in writes],
            sort_keys=True,
        )
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
    def dual_control(self) -> bool:
        """Whether the user has tools of their own (telecom)."""
        return self.spec.dual_control

    def user_tool_names(self) -> list[str]:
        """The user's tools, sorted by name ([] without dual control)."""
        return [] if self.spec.user_tools is None else list(self.spec.user_tools.declarations(self.task_set))

    def is_user_write(self, name: str) -> bool:
        """Whether `name` is a user tool that changes the user's state."""
        if self.spec.user_tools is None:
            return False
        spec = self.spec.user_tools.declarations(self.task_set).get(name)
        return spec is not None and spec.tool_type == "write"

    def new_user_db(self) -> BaseModel:
        """A fresh user DB (dual control only), validated from the cached `user_db.toml`.

        Raises:
            ValueError: for a domain without user state.
        """
        if self.spec.user_db_model is None:
            raise ValueError(f"{self.name} has no user state")
        return self.spec.user_db_model.model_validate(self.store.db_json(self.name, "user_db"))

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

    def environment(self, initial_state: InitialState | None = None) -> Environment:
        """A new environment over a pristine database (built on first use), set up as the task's initial state says.

        Args:
            initial_state: the task's `initial_state` (its set-up functions run now); None for none.

        Raises:
            ValueError: for initialisation data or a message history (no task of the pinned sets has them), or for
                set-up functions in a domain without user state.
        """
        env = Environment(self)
        env.set_up(initial_state)
        return env

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
            arguments: Mapping[str, Any]
            if isinstance(call, WriteCall):
                name, arguments, requestor = call.name, call.arguments, call.requestor
            else:
                (name, arguments), requestor = call, "assistant"
            if requestor == "user" and self.is_user_write(name):
                env.execute(name, arguments, requestor="user")
            elif requestor != "user" and self.is_write(name):
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
        self._user_tools: DomainTools | None = None
        self._writes: list[WriteCall] = []
        self._setup: list[EnvFunctionCall] = []

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
    def user_tools(self) -> DomainTools | None:
        """The user's tools over the live user DB (dual control), else None."""
        spec = self.runtime.spec
        if spec.user_tools is None:
            return None
        if self._user_tools is None:
            self._user_tools = spec.user_tools(self.runtime.new_user_db(), self.runtime.task_set)
        return self._user_tools

    @property
    def user_db(self) -> Any:
        """The live user DB (dual control), else None."""
        tools = self.user_tools
        return None if tools is None else tools.db

    def sync(self) -> None:
        """Make the two sides consistent (the domain's `sync`; a no-op without dual control)."""
        if self.runtime.spec.sync is not None and self.user_tools is not None:
            self.runtime.spec.sync(self.tools, self.user_tools)

    def _toolkit(self, side: str) -> DomainTools:
        if side == "user":
            if self.user_tools is None:
                raise ValueError(NO_USER_TOOLS)
            return self.user_tools
        if side == "assistant":
            return self.tools
        raise ValueError(f"Invalid environment type: {side}")

    def set_up(self, initial_state: InitialState | None) -> None:
        """Run a task's set-up functions (each followed by a sync), then sync once more, as tau2's `set_state`.

        Raises:
            ValueError: for initialisation data or a message history (unsupported), or when a set-up function is
                missing; whatever a set-up function raises.
        """
        if initial_state is not None:
            if initial_state.initialization_data is not None or initial_state.message_history:
                raise ValueError("initial states with initialization_data or message_history are not supported")
            for call in initial_state.initialization_actions or []:
                self.run_function(call)
                self._setup.append(call)
        self.sync()

    def run_function(self, call: EnvFunctionCall) -> Any:
        """Run any function of either side's toolkit (set-up or assertion), then sync; returns its raw result.

        Raises:
            ValueError: for an unknown side or function; whatever the function raises.
        """
        func = getattr(self._toolkit(call.env_type), call.func_name, None)
        if func is None or call.func_name.startswith("_") or not callable(func):
            raise ValueError(f"Function {call.func_name} not found in {call.env_type} tools")
        result = func(**call.arguments)
        self.sync()
        return result

    def check(self, assertion: EnvAssertion) -> bool:
        """Run an environment assertion; whether its result equals `assert_value`.

        Raises:
            ValueError: if the function does not return a bool; whatever it raises.
        """
        result = self.run_function(assertion)
        if not isinstance(result, bool):
            raise ValueError(f"Function {assertion.func_name} returned {type(result)} instead of bool")
        return result == assertion.assert_value

    def user_db_hash(self) -> str | None:
        """tau2's fingerprint of the user DB (dual control), else None."""
        return None if self.user_db is None else db_hash(self.user_db)

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

    def execute(
        self, name: str, arguments: Mapping[str, Any], *, requestor: str = "assistant", sync: bool = True
    ) -> ToolOutcome:
        """Execute one tool call on the live DB (the user's DB for a user call).

        Args:
            name: tool name (unknown names give tau2's `Error: Tool '<name>' not found.`).
            arguments: keyword arguments, as decoded from the call.
            requestor: `assistant`, or `user` for the user's own tools (dual control).
            sync: sync the two sides after a successful call (tau2's `get_response`); the gold replay does not.

        Returns:
            The official content string and error flag; tool errors never raise.
        """
        user = requestor == "user"
        if self.runtime.is_user_write(name) if user else self.runtime.is_write(name):
            self._writes.append(WriteCall(name, copy.deepcopy(dict(arguments)), requestor if user else "assistant"))
        if user and self.user_tools is None:
            return ToolOutcome(content=f"Error: {NO_USER_TOOLS}", error=True)
        toolkit = self.user_tools if user and self.user_tools is not None else self.tools
        outcome = toolkit.execute(name, arguments)
        if sync and not outcome.error and self.runtime.dual_control:
            try:
                self.sync()
            except Exception as exc:  # tau2 reports a failing sync as the call's error
                return ToolOutcome(content=f"Error: {exc}", error=True)
        return outcome

    def respond(self, call: MessageToolCall) -> ToolMessage:
        """Answer a tool call with a tool message, as tau2's environment does.

        A user-requested call runs on the user's tools; it fails where the user has none (airline, retail).
        """
        outcome = self.execute(call.name, call.arguments, requestor=call.requestor)
        return ToolMessage(id=call.id, content=outcome.content, requestor=call.requestor, error=outcome.error)

    def db_hash(self) -> str:
        """tau2's fingerprint of the live DB.

        Reused from the runtime when its write log was fingerprinted before (the pristine DB's when
        no write ran); otherwise computed and remembered there.
        """
        if self.runtime.dual_control:  # set-up functions and syncs change the DB too: no cache
            return db_hash(self.db)
        cached = self.runtime.cached_hash(self._writes)
        if cached is not None:
            return cached
        digest = db_hash(self.db)
        self.runtime.remember_hash(self._writes, digest)
        return digest

    def fork(self) -> Environment:
        """An independent environment in the same state, rebuilt by replaying the set-up and the write log."""
        if not self._setup:
            return self.runtime.replay(self._writes)
        env = self.runtime.environment(InitialState(initialization_actions=list(self._setup)))
        for write in self._writes:
            env.execute(write.name, write.arguments, requestor=write.requestor)
        return env
