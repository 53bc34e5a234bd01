"""The state controller in Gecko's pipeline: the session's fault policy applied to its tool calls.

The policy engine is `utils.faults` (the runners' real-tool bridges use the same one). Here: which policy a
session has (its own, `config.faults`, else the server-wide `--faults`), the controller state kept with the
session (`config.fault_state`), and what each intervention does to a call of the pipeline:

```
CallRunner: syntactic check ─► FaultStep (decide) ─► blocking: the error, nothing runs (timeout+executed: runs)
                                                  ├► stale_read: the same read's earlier answer (history), nothing runs
                                                  ├► delay / timeout wait: sleep, then the call
                                                  ├► external_change: the patch on the state, then the call
                                                  └► call ─► corrupt: the damaged answer; constraint: a notice
                                                             and a new item in the session's checklist
every call of a session with a policy: `fault_state` committed with it; an injection: `fault` in its history entry
```

Calls that fail the syntactic check never reach the controller: an injected fault is never confused with the
agent's own error, and the n-th call of a rule counts calls that would run.
"""

from __future__ import annotations

import asyncio
import copy
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonpatch

from gecko.pipeline.stages import ChecklistItem
from gecko.sessions.model import SessionRecord
from gecko.sessions.store import SessionStore
from gecko.toolkits.model import Operation
from utils.faults import (
    CallFacts,
    Earlier,
    FaultPolicy,
    FaultState,
    Injection,
    ServiceError,
    Side,
    constraint_item,
    corrupt,
    decide,
    needs_earlier,
    needs_state,
    observe,
    parse_policy,
    service_error,
    wait_seconds,
)
from utils.httpstatus import is_success
from utils.jsonlimits import READABLE_DEPTH, is_readable_change
from utils.jsonutil import canonical_json, dumps_compact

FAULTS_KEY = "faults"
"""Session config: the session's own policy (inherited by forks)."""
FAULT_STATE_KEY = "fault_state"
"""Session config: the controller's state (call count, fires, open windows)."""
CONSTRAINTS_KEY = "_constraints"
"""Session checklists: the items constraint interventions added or changed."""
EARLIER_LOOKBACK = 32
"""History entries searched for a stale read's earlier answer."""
POLICY_CACHE = 256


class FaultPolicies:
    """A worker's policies: the server-wide one, the sessions' (parsed once each), and counters for `/metrics`.

    Args:
        default: the server-wide policy (`--faults`), for sessions without their own; None: none.
        on_injection: called with (level, kind) for every injection (the server's metrics).
    """

    def __init__(self, default: FaultPolicy | None,
                 on_injection: Callable[[str, str], None] | None = None) -> None:
        self.default = default
        self._on_injection = on_injection
        self._parsed: dict[str, FaultPolicy] = {}
        self._last: tuple[Any, FaultPolicy | None] | None = None
        self.injected: Counter[tuple[str, str]] = Counter()
        """(level, kind) → injections by this worker."""

    def policy_for(self, config: Mapping[str, Any]) -> FaultPolicy | None:
        """The policy in effect for a session: its own (`config.faults`), else the server-wide one; None for none
        (the no-fault path: one lookup, nothing parsed or allocated)."""
        own = config.get(FAULTS_KEY)
        if own is None:
            return self.default
        known = self._last
        if known is not None and known[0] is own:  # the same config object as the last call's: parsed already
            return known[1]
        key = dumps_compact(own)
        policy = self._parsed.get(key)
        if policy is None:
            policy = parse_policy(own, "of the session")
            if len(self._parsed) >= POLICY_CACHE:
                self._parsed.clear()
            self._parsed[key] = policy
        found = policy if policy.rules else None
        self._last = (own, found)  # holds `own`, so its identity is not reused while remembered
        return found

    def source(self, config: Mapping[str, Any]) -> str:
        """`session`, `server` or `none`: where the session's policy comes from."""
        if config.get(FAULTS_KEY) is not None:
            return "session"
        return "server" if self.default is not None else "none"

    async def step(self, store: SessionStore, record: SessionRecord, policy: FaultPolicy, operation: Operation,
                   arguments: Any, side: Side) -> FaultStep:
        """Count the call and decide, for a session whose policy (`policy_for`) is `policy`. A session without
        one never gets here: its only cost is the `policy_for` check."""
        earlier = None
        if operation.access == "read" and needs_earlier(policy):
            earlier = _earlier(await store.history_tail(record.id, EARLIER_LOOKBACK), operation, arguments)
        state = FaultState.from_public(record.config.get(FAULT_STATE_KEY))
        facts = CallFacts((operation.tool_name, operation.operation_id, operation.original_name), operation.access,
                          side, mark=record.version, earlier=earlier,
                          state=(lambda: record.state) if needs_state(policy) else None)
        injection = decide(policy, state, facts)
        if injection is not None:
            self.injected[(injection.level, injection.kind)] += 1
            if self._on_injection is not None:
                self._on_injection(injection.level, injection.kind)
            if injection.kind == "stale_read" and earlier is not None:
                injection = injection.with_params(from_version=earlier.mark)
        return FaultStep(injection, state, dict(record.config), earlier)

    def prometheus(self) -> str:
        """`gecko_faults_injected_total{level,kind}` lines ('' before any injection)."""
        if not self.injected:
            return ""
        lines = ["# HELP gecko_faults_injected_total Faults injected by this worker's state controller.",
                 "# TYPE gecko_faults_injected_total counter"]
        lines += [f'gecko_faults_injected_total{{level="{level}",kind="{kind}"}} {count}'
                  for (level, kind), count in sorted(self.injected.items())]
        return "\n".join(lines) + "\n"


def _earlier(entries: Iterable[Mapping[str, Any]], operation: Operation, arguments: Any) -> Earlier | None:
    """The latest successful, unfaulted answer of the same read in the recent history."""
    wanted = canonical_json(arguments)
    for entry in reversed(list(entries)):
        if (entry.get("tool") == operation.tool_name and is_success(entry.get("status")) and not entry.get("fault")
                and canonical_json(entry.get("arguments")) == wanted):
            return Earlier(entry.get("response"), entry.get("state_version"))
    return None


@dataclass
class FaultStep:
    """One call's decision and what it changes; the runner asks it at each point of the call."""

    injection: Injection | None
    state: FaultState
    config: dict[str, Any]
    earlier: Earlier | None = None
    record: dict[str, Any] = field(default_factory=dict)
    """What the history entry's `fault` holds (the injection, plus what its effect did)."""

    def __post_init__(self) -> None:
        if self.injection is not None:
            self.record = self.injection.public()

    @property
    def kind(self) -> str | None:
        return self.injection.kind if self.injection is not None else None

    def blocks(self) -> bool:
        """The call does not run: a blocking fault (not `executed`), or a stale answer."""
        return self.injection is not None and not self.injection.executed

    def error(self) -> ServiceError | None:
        """The error the caller gets (blocking faults), else None."""
        inj = self.injection
        return service_error(inj) if inj is not None and inj.blocking else None

    async def wait(self) -> None:
        """A `delay`, or a `timeout` that really waits."""
        seconds = wait_seconds(self.injection) if self.injection is not None else 0.0
        if seconds:
            await asyncio.sleep(seconds)

    def changed_state(self, state: dict[str, Any]) -> dict[str, Any] | None:
        """The state after an `external_change` (None when there is none, or its patch does not apply)."""
        inj = self.injection
        if inj is None or inj.kind != "external_change":
            return None
        patch = [dict(op) for op in inj.params["patch"]]
        try:
            changed = jsonpatch.apply_patch(state, patch, in_place=False)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, TypeError) as exc:
            self.record.update(applied=False, reason=f"the patch does not apply to the state: {exc}")
            return None
        if not is_readable_change(changed, patch):
            self.record.update(applied=False, reason=f"the patched state would nest deeper than {READABLE_DEPTH} "
                               "levels, which Gecko cannot store and give back")
            return None
        self.record["applied"] = True
        return changed

    def answer(self, body: Any) -> Any:
        """The answer the caller gets for a call that ran: corrupted, or as it is."""
        inj = self.injection
        if inj is None or inj.kind != "corrupt":
            return body
        damaged, what = corrupt(body, inj)
        self.record.update(what)
        return damaged

    def notice(self, checklists: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """A constraint: its notice text and the session's checklists with the new or changed item."""
        inj = self.injection
        if inj is None or inj.kind != "constraint":
            return None
        items = list(checklists.get(CONSTRAINTS_KEY) or [])
        item = constraint_item(inj, len(items))
        items.append(item)
        delivered = "notice" if inj.params.get("deliver") == "notice" else "notice (a simulation has no user)"
        self.record.update(checklist_item=item["id"], delivered=delivered)
        return item["description"], {**checklists, CONSTRAINTS_KEY: items}

    def commit_config(self, access: str, ok: bool) -> dict[str, Any]:
        """The session config to commit: the controller state after this call."""
        observe(self.state, access, ok)
        return {**self.config, FAULT_STATE_KEY: self.state.public()}


def synced_config(policies: FaultPolicies, config: Mapping[str, Any], accesses: Iterable[str]) -> dict[str, Any] | None:
    """The config after real calls were synced into the session (`/update-state-from-real`): they are calls of the
    session, so the controller's count moves past them (and its successful writes, since the tools ran them) and the
    session's next calls, and the forks made from it afterwards (the next turn's GATS attempts), draw new numbers.
    None when the session has no policy (nothing to count)."""
    if policies.policy_for(config) is None:
        return None
    state = FaultState.from_public(config.get(FAULT_STATE_KEY))
    for access in accesses:
        state.calls += 1
        observe(state, access, True)
    return {**config, FAULT_STATE_KEY: state.public()}


def merge_constraints(items: list[ChecklistItem], checklists: Mapping[str, Any]) -> list[ChecklistItem]:
    """A checklist with the session's constraint items: a replacing one takes its item's place, others are added."""
    constraints = checklists.get(CONSTRAINTS_KEY) or []
    if not constraints:
        return items
    merged = list(items)
    for item in constraints:
        new = ChecklistItem(str(item["id"]), str(item["description"]))
        index = next((i for i, old in enumerate(merged) if item.get("replaces") and old.id == item["replaces"]), None)
        if index is not None:
            merged[index] = new
        else:
            merged = [old for old in merged if old.id != new.id] + [new]
    return merged


def fault_summary(entries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Injections recorded in a session's history: total, per level, kind and rule."""
    faults = [entry["fault"] for entry in entries if entry.get("fault")]
    return {"total": len(faults),
            "by_level": dict(Counter(str(f.get("level")) for f in faults)),
            "by_kind": dict(Counter(str(f.get("kind")) for f in faults)),
            "by_rule": dict(Counter(str(f.get("rule")) for f in faults))}


def forked_config(config: Mapping[str, Any], replace: bool, policy: FaultPolicy | None) -> dict[str, Any]:
    """A fork's config: the parent's policy and controller state, or (`replace`) `policy` with a fresh state."""
    out = copy.deepcopy(dict(config))
    if replace:
        out.pop(FAULT_STATE_KEY, None)
        out.pop(FAULTS_KEY, None)
        if policy is not None:
            out[FAULTS_KEY] = policy.public()
    return out
