"""The decision: which rule of a policy (if any) hits a call. Pure and deterministic.

```
decide(policy, state, facts) ─► Injection | None        state: FaultState (call counter, fires, windows)
      │ counts the call (state.calls += 1: the call number n)
      │ an open `expire_session` window hits first
      │ else rules in order: selector (tools, access, n, side, writes, state) ─► limit ─► stale applicable?
      │                      ─► draw(seed, stream, rule, n) < probability  ─► the first winner applies
      ▼
Injection(rule, kind, level, call=n, params)             history / trace record: `Injection.public()`
```

A draw is a hash of (seed, stream, rule name, call number), never a random generator's position, so the same
policy over the same sequence of calls makes the same decisions in any process, and a retry is a new call
(a new draw). The caller reports what ran (`observe`): successful writes count for `after_writes`.
Nothing here performs an intervention: `utils.faults.effects` holds what each kind does to a result, and the
two callers (Gecko's pipeline, the runners' real-tool bridges) apply them.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from jsonpointer import JsonPointerException, resolve_pointer

from utils.faults.policy import (
    BLOCKING_KINDS,
    LEVELS,
    FaultPolicy,
    Level,
    RulePlan,
    Side,
    StateCondition,
)

_MISSING = object()
_SCALE = float(2**64)


@dataclass
class FaultState:
    """What a controller remembers between calls (stored with the session on Gecko, in memory on a bridge)."""

    calls: int = 0
    """Calls seen so far: the number of the last call."""
    writes: int = 0
    """Successful write calls seen."""
    fired: dict[str, int] = field(default_factory=dict)
    """Injections per rule name."""
    expired_rule: str | None = None
    """The `expire_session` rule whose window is open."""
    expired_left: int = 0
    """Calls the open window still refuses."""

    def public(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {"calls": self.calls, "writes": self.writes, "fired": dict(self.fired)}
        if self.expired_left:
            out.update(expired_rule=self.expired_rule, expired_left=self.expired_left)
        return out

    @classmethod
    def from_public(cls, data: Mapping[str, Any] | None) -> FaultState:
        """The state stored as `public()` (a fresh state for None)."""
        if not data:
            return cls()
        return cls(int(data.get("calls", 0)), int(data.get("writes", 0)), dict(data.get("fired") or {}),
                   data.get("expired_rule"), int(data.get("expired_left", 0)))


@dataclass(frozen=True)
class Earlier:
    """An earlier answer of the same read (tool and arguments), for `stale_read`."""

    value: Any
    mark: Any
    """Where the state was when it was answered (Gecko: the state version; a bridge: its write count)."""


@dataclass(slots=True)
class CallFacts:
    """What the decision may look at for one call."""

    names: tuple[str, ...]
    """The tool's names that globs match (`toolkit/operationId`, `operationId`, the original name)."""
    access: str
    """`read` or `write`."""
    side: Side
    mark: Any = None
    """Where the state is now (compared with `Earlier.mark`)."""
    earlier: Earlier | None = None
    """The same read's earlier answer, when the caller has one (only needed when `policy.reads_earlier`)."""
    state: Callable[[], Any] | None = None
    """The task state as JSON, computed on demand (only when a rule has a state condition)."""


@dataclass(frozen=True)
class Injection:
    """A decision to intervene on call `call`."""

    rule: str
    kind: str
    level: Level
    call: int
    params: Mapping[str, Any] = field(default_factory=dict)
    """The intervention's parameters (from the policy), plus what the effect chose (`pointer`, `from_version`)."""
    draw: float = 0.0
    """The seeded draw that decided it (for replays and reports)."""

    @property
    def blocking(self) -> bool:
        """The caller gets an error instead of the result (tool-level faults and an expired session)."""
        return self.kind in BLOCKING_KINDS

    @property
    def executed(self) -> bool:
        """Whether the underlying call runs: not for blocking faults (except a `timeout` with `executed`), nor for
        a stale read (the earlier answer is returned instead)."""
        if self.kind == "stale_read":
            return False
        return not self.blocking or bool(self.params.get("executed"))

    def with_params(self, **extra: Any) -> Injection:
        """The same injection with more recorded parameters."""
        return Injection(self.rule, self.kind, self.level, self.call, {**self.params, **extra}, self.draw)

    def public(self) -> dict[str, Any]:
        """The record kept in the history and traces: `{rule, kind, level, call, executed, …params}`."""
        return {"rule": self.rule, "kind": self.kind, "level": self.level, "call": self.call,
                "executed": self.executed, **self.params}

    @classmethod
    def from_public(cls, record: Mapping[str, Any]) -> Injection:
        """The injection a record (`public()`) describes."""
        params = {k: v for k, v in record.items() if k not in ("rule", "kind", "level", "call")}
        kind = str(record.get("kind", ""))
        return cls(str(record.get("rule", "")), kind, LEVELS.get(kind, "tool"), int(record.get("call", 0)), params)


@lru_cache(maxsize=4096)
def _draw_prefix(seed: int, stream: str, rule: str) -> Any:
    """The hash state after `seed|stream|rule|` (copied per draw: the per-call part is all that is hashed)."""
    return hashlib.blake2b(f"{seed}|{stream}|{rule}|".encode(), digest_size=8)


def draw(seed: int, stream: str, rule: str, call: int, salt: str = "") -> float:
    """The seeded uniform draw in [0, 1) of `rule` at call number `call`: the BLAKE2b-64 of
    `seed|stream|rule|call|salt` as a fraction of 2**64."""
    hasher = _draw_prefix(seed, stream, rule).copy()
    hasher.update(f"{call}|{salt}".encode())
    return int.from_bytes(hasher.digest(), "big") / _SCALE


@lru_cache(maxsize=4096)
def _glob_hit(glob: str, name: str) -> bool:
    return fnmatch.fnmatchcase(name, glob)


def _tools_hit(globs: tuple[str, ...], names: tuple[str, ...]) -> bool:
    return globs == ("*",) or any(_glob_hit(glob, name) for glob in globs for name in names)


def _number_hit(match: RulePlan, n: int) -> bool:
    if match.calls is not None and n not in match.calls:
        return False
    if match.every is not None and n % match.every:
        return False
    if match.from_call is not None and n < match.from_call:
        return False
    return match.until is None or n <= match.until


def state_holds(condition: StateCondition, state: Any) -> bool:
    """Whether the task state meets a rule's state condition."""
    try:
        value = resolve_pointer(state, condition.path)
    except (JsonPointerException, TypeError, KeyError, IndexError):
        value = _MISSING
    if condition.exists is not None:
        return (value is not _MISSING) == condition.exists
    if "equals" in condition.model_fields_set:
        return value is not _MISSING and value == condition.equals
    return value is _MISSING or value != condition.not_equals


def _selects(rule: RulePlan, state: FaultState, facts: CallFacts, n: int) -> bool:
    if rule.side is not None and rule.side != facts.side:
        return False
    if rule.access is not None and rule.access != facts.access:
        return False
    if not _number_hit(rule, n) or not (rule.any_tool or _tools_hit(rule.tools, facts.names)):
        return False
    if rule.after_writes is not None and state.writes < rule.after_writes:
        return False
    if rule.limit is not None and state.fired.get(rule.name, 0) >= rule.limit:
        return False
    if rule.stale and not (facts.access == "read" and facts.earlier is not None and facts.earlier.mark != facts.mark):
        return False
    return rule.state is None or (facts.state is not None and state_holds(rule.state, facts.state()))


def decide(policy: FaultPolicy, state: FaultState, facts: CallFacts) -> Injection | None:
    """Count the call and decide whether a rule hits it (see the module docstring). Mutates `state`."""
    state.calls += 1
    n = state.calls
    if state.expired_left > 0 and state.expired_rule is not None:
        state.expired_left -= 1
        return Injection(state.expired_rule, "expire_session", "state", n, {"window": True})
    plan = policy.plan
    for rule in plan.rules:
        if rule.probability <= 0.0 or not _selects(rule, state, facts, n):
            continue
        value = draw(plan.seed, plan.stream, rule.name, n)
        if value >= rule.probability:
            continue
        state.fired[rule.name] = state.fired.get(rule.name, 0) + 1
        if rule.expire_calls > 1:
            state.expired_rule, state.expired_left = rule.name, rule.expire_calls - 1
        params = rule.rule.do.model_dump(mode="json", exclude={"kind"})
        return Injection(rule.name, rule.kind, LEVELS[rule.kind], n, params, round(value, 6))
    return None


def observe(state: FaultState, access: str, ok: bool) -> None:
    """Record what a call did (a successful write moves `after_writes` conditions)."""
    if ok and access == "write":
        state.writes += 1


def needs_earlier(policy: FaultPolicy) -> bool:
    """Whether a rule may answer a read with an earlier answer (callers then look one up)."""
    return policy.reads_earlier


def needs_state(policy: FaultPolicy) -> bool:
    """Whether a rule looks at the task state (callers then offer `CallFacts.state`)."""
    return policy.reads_state
