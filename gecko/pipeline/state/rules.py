"""Rules state reducer: the world model's state (records and fields of the toolkits), bounded by the world, not by
the session's length (the call log itself lives in the history).

What the rules state holds (documented in docs/concepts/world-model.md):
- `<toolkit>`: the world model (`gecko.pipeline.world`): the records of each resource under their collection
  (`{"petstore": {"pets": {"1": {...}}}}`), counters, and the top-level fields that writes set. Creates add a
  record, updates change it, deletes remove it; real results synced with `/update-state-from-real` do the same,
  and real reads store the records they returned;
- `effects`: the last `RECENT` successful writes the world model does not place (no resource, no field), oldest
  first, each `{"tool", "arguments", "response"}` (`{"tool", "arguments", "result", "source": "real"}` for real ones);
- `observed`: the same for reads, when the session records reads (`record_reads`) or real reads are synced and
  not placed;
- `counts`: how many writes (and recorded reads) each tool has had in the session, `{"toolkit/tool": n}`.

The state grows with the world (records created), never with the number of calls; each stored delta is the size
of one change.
"""

from __future__ import annotations

from typing import Any

import orjson

from gecko.pipeline.stages import CallContext, RealCall, StateChange
from gecko.pipeline.world import call_seed, is_error_body, observe, world_change
from gecko.sessions.owned import Owned
from utils.roles import ENGINE_RULES

EFFECTS_KEY = "effects"
OBSERVED_KEY = "observed"
COUNTS_KEY = "counts"
RECENT = 8
"""Calls kept in `effects` / `observed`."""
ERROR_PREFIX = "Error"
"""Real results that are text starting with this are failures (tau2's `Error: …`)."""


def _pointer(*parts: str) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def count_call(state: dict[str, Any], tool: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A new state with `tool` counted once more under `counts`, and its patch."""
    new = dict(state)
    counts = state.get(COUNTS_KEY)
    if isinstance(counts, dict):
        count = counts.get(tool)
        count = count + 1 if isinstance(count, int) and not isinstance(count, bool) else 1
        new[COUNTS_KEY] = {**counts, tool: count}
        return new, [{"op": "add", "path": _pointer(COUNTS_KEY, tool), "value": count}]
    new[COUNTS_KEY] = {tool: 1}
    return new, [{"op": "add", "path": _pointer(COUNTS_KEY), "value": {tool: 1}}]


def record_call(state: dict[str, Any], key: str, tool: str, entry: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A new state with `entry` at the end of `state[key]` (keeping the last RECENT) and `tool` counted.

    `state` is not modified; states are immutable values, so the copy is shallow. Returns the new
    state and the RFC 6902 patch from `state` to it.
    """
    new = dict(state)
    ops: list[dict[str, Any]] = []
    recent = state.get(key)
    if isinstance(recent, list):
        kept = recent[len(recent) - RECENT + 1:] if len(recent) >= RECENT else recent
        ops += [{"op": "remove", "path": _pointer(key, "0")}] * (len(recent) - len(kept))
        new[key] = [*kept, entry]
        ops.append({"op": "add", "path": _pointer(key, "-"), "value": entry})
    else:
        new[key] = [entry]
        ops.append({"op": "add", "path": _pointer(key), "value": [entry]})
    new, counted = count_call(new, tool)
    return new, ops + counted


def real_result(result: Any) -> tuple[Any, bool]:
    """(a real tool's result as JSON data when it is JSON text, whether it reports a failure)."""
    value = result
    if isinstance(result, str) and result.lstrip()[:1] in ("{", "["):
        try:
            value = orjson.loads(result)
        except orjson.JSONDecodeError:
            value = result
    failed = is_error_body(value) or (isinstance(value, str) and value.startswith(ERROR_PREFIX))
    return value, failed


class RulesStateUpdater:
    """Deterministic reducer: the world model for writes it can place; recent effects, observations and counts
    for the rest."""

    engine = ENGINE_RULES
    needs_recent_calls = False
    deferred = False

    async def update(self, ctx: CallContext, response: Any) -> StateChange | None:
        op = ctx.operation
        tool = op.tool_name
        if op.access == "write":
            placed = world_change(ctx.state, op, ctx.arguments, response, ctx.seed, ctx.owned)
            if placed is not None:
                state, patch = placed
                state, counted = count_call(state, tool)
                return StateChange(state=state, patch=patch + counted, engine=self.engine)
        elif not ctx.session_config.get("record_reads"):
            return None
        key = EFFECTS_KEY if op.access == "write" else OBSERVED_KEY
        state, patch = record_call(ctx.state, key, tool, {"tool": tool, "arguments": ctx.arguments, "response": response})
        return StateChange(state=state, patch=patch, engine=self.engine)

    async def bootstrap(self, state: dict[str, Any], toolkits: list[str], usage: list[dict[str, Any]]) -> dict[str, Any]:
        return state

    async def apply_real(self, state: dict[str, Any], calls: list[RealCall], usage: list[dict[str, Any]]) -> StateChange:
        patch: list[dict[str, Any]] = []
        owned = Owned()  # the states between two calls of this sync are seen by nobody else
        for call in calls:
            tool = call.operation.tool_name if call.operation else (f"{call.toolkit}/{call.name}" if call.toolkit else call.name)
            placed = None
            if call.operation is not None and call.operation.world is not None:
                value, failed = real_result(call.result)
                if not failed:
                    placed = (world_change(state, call.operation, call.arguments, value,
                                           call_seed("real", tool, call.arguments), owned, real=True)
                              if call.access == "write" else observe(state, call.operation, call.arguments, value, owned))
            if placed is not None:
                state, ops = placed
                patch += ops
                if call.access == "write":
                    state, counted = count_call(state, tool)
                    patch += counted
                continue
            entry = {"tool": tool, "arguments": call.arguments, "result": call.result, "source": "real"}
            state, ops = record_call(state, OBSERVED_KEY if call.access == "read" else EFFECTS_KEY, tool, entry)
            patch += ops
        return StateChange(state=state, patch=patch, engine=self.engine)
