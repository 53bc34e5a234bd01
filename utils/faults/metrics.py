"""Robustness metrics over call traces (after ToolGym), one definition for every runner.

An *episode* is one uninterrupted sequence of an agent's calls: a GATS attempt in simulation, a real run of a
turn, a tau2 conversation's calls. Step t is the t-th call of an episode. Counts are additive (per task, then
summed over tasks), and every rate is a ratio of summed counts:

| metric | definition |
|---|---|
| Recovery Rate | P(call t+1 succeeds \\| call t failed): failed calls followed by a successful call, over failed calls (a failed last call is not a recovery) |
| Recovery Rate (injected) | the same over calls an injected fault failed |
| Flexibility | P(the agent takes another way after an injected error): injected errors whose next call differs (tool or arguments), over injected errors (no next call: not flexible) |
| Schema Compliance | calls whose arguments fit the tool's argument schema, over calls (an unknown tool or arguments that are not an object do not) |
| Give-up rate | episodes that met an injected error and made no successful call after their last one, over episodes that met an injected error |

An *injected error* is a call an injected fault answered with an error (`timeout`, `rate_limit`, `unavailable`,
`server_error`, `expire_session`); other injections (delays, stale or corrupted answers, constraints) are counted
by kind but are not failures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from utils.faults.policy import BLOCKING_KINDS


@dataclass(frozen=True)
class TraceCall:
    """One call of an episode, as the metrics see it."""

    tool: str
    arguments: Any
    """The arguments (JSON); None when they were not a JSON object."""
    ok: bool
    """The agent got a successful result."""
    fault: Mapping[str, Any] | None = None
    """The injection record when the state controller intervened."""
    compliant: bool = True
    """The arguments fit the tool's schema."""

    @property
    def injected_error(self) -> bool:
        """An injected fault failed this call."""
        return self.fault is not None and not self.ok and str(self.fault.get("kind")) in BLOCKING_KINDS

    def same_call(self, other: TraceCall) -> bool:
        """Same tool, same arguments (a plain retry)."""
        return self.tool == other.tool and self.arguments == other.arguments


@dataclass
class RobustnessCounts:
    """Additive counts over episodes (see the module docstring for what each rate divides)."""

    episodes: int = 0
    calls: int = 0
    failed: int = 0
    recovered: int = 0
    injected: int = 0
    """Calls the controller intervened in (any kind)."""
    injected_errors: int = 0
    injected_recovered: int = 0
    flexible: int = 0
    compliant: int = 0
    faulted_episodes: int = 0
    """Episodes that met an injected error."""
    gave_up: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)

    def add(self, other: RobustnessCounts) -> RobustnessCounts:
        """Add `other` into these counts (returns self)."""
        for name in ("episodes", "calls", "failed", "recovered", "injected", "injected_errors", "injected_recovered",
                     "flexible", "compliant", "faulted_episodes", "gave_up"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.by_kind.update(other.by_kind)
        return self

    def rates(self) -> dict[str, float | None]:
        """The metrics (None where nothing was counted)."""
        return {
            "recovery_rate": _rate(self.recovered, self.failed),
            "recovery_rate_injected": _rate(self.injected_recovered, self.injected_errors),
            "flexibility": _rate(self.flexible, self.injected_errors),
            "schema_compliance": _rate(self.compliant, self.calls),
            "give_up_rate": _rate(self.gave_up, self.faulted_episodes),
        }

    def public(self) -> dict[str, Any]:
        """The counts as JSON (what a task records; `from_public` reads it back)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in (
            "episodes", "calls", "failed", "recovered", "injected", "injected_errors", "injected_recovered",
            "flexible", "compliant", "faulted_episodes", "gave_up")}
        out["by_kind"] = dict(sorted(self.by_kind.items()))
        return out

    @classmethod
    def from_public(cls, data: Mapping[str, Any] | None) -> RobustnessCounts:
        """Counts recorded with `public()` (zero for None)."""
        counts = cls()
        for name, value in (data or {}).items():
            if name == "by_kind":
                counts.by_kind = Counter({str(k): int(v) for k, v in dict(value).items()})
            elif hasattr(counts, name):
                setattr(counts, name, int(value))
        return counts


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def count_episode(calls: Sequence[TraceCall]) -> RobustnessCounts:
    """The counts of one episode."""
    counts = RobustnessCounts(episodes=1, calls=len(calls))
    last_error: int | None = None
    for index, call in enumerate(calls):
        following = calls[index + 1] if index + 1 < len(calls) else None
        counts.compliant += call.compliant
        if call.fault is not None:
            counts.injected += 1
            counts.by_kind[str(call.fault.get("kind"))] += 1
        if not call.ok:
            counts.failed += 1
            counts.recovered += following is not None and following.ok
        if call.injected_error:
            last_error = index
            counts.injected_errors += 1
            counts.injected_recovered += following is not None and following.ok
            counts.flexible += following is not None and not following.same_call(call)
    if last_error is not None:
        counts.faulted_episodes = 1
        counts.gave_up = int(not any(call.ok for call in calls[last_error + 1:]))
    return counts


def count_episodes(episodes: Iterable[Sequence[TraceCall]]) -> RobustnessCounts:
    """The summed counts of several episodes."""
    total = RobustnessCounts()
    for episode in episodes:
        total.add(count_episode(episode))
    return total


def side_counts(sides: Mapping[str, Iterable[Sequence[TraceCall]]]) -> dict[str, Any]:
    """Per side (`simulated`, `real`) and over both: counts as JSON (what a task's outcome records)."""
    out: dict[str, Any] = {}
    total = RobustnessCounts()
    for side, episodes in sides.items():
        counts = count_episodes(episodes)
        out[side] = counts.public()
        total.add(counts)
    out["all"] = total.public()
    return out
