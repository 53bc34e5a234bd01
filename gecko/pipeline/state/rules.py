"""Rules state reducer: a small, bounded task state (the call log itself lives in the history).

What the rules state holds (documented in the README):
- `effects`: the last `RECENT` successful write calls, oldest first, each `{"tool", "arguments", "response"}`
  (`{"tool", "arguments", "result", "source": "real"}` for results of real tools);
- `observed`: the same for reads, when the session records reads (`record_reads`) or real reads are synced;
- `counts`: how many writes (and recorded reads) each tool has had in the session, `{"toolkit/tool": n}`.

Every call's full record stays reachable in `GET /sessions/{id}/history`. The state — and so what an
LLM stage sees of it, and each stored delta — stays the same size however long the session runs.
"""

from __future__ import annotations

from typing import Any

from gecko.pipeline.stages import CallContext, RealCall, StateChange
from utils.roles import ENGINE_RULES

EFFECTS_KEY = "effects"
OBSERVED_KEY = "observed"
COUNTS_KEY = "counts"
RECENT = 8
"""Calls kept in `effects` / `observed`."""


def _pointer(*parts: str) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


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
    counts = state.get(COUNTS_KEY)
    if isinstance(counts, dict):
        count = counts.get(tool)
        count = count + 1 if isinstance(count, int) and not isinstance(count, bool) else 1
        new[COUNTS_KEY] = {**counts, tool: count}
        ops.append({"op": "add", "path": _pointer(COUNTS_KEY, tool), "value": count})
    else:
        new[COUNTS_KEY] = {tool: 1}
        ops.append({"op": "add", "path": _pointer(COUNTS_KEY), "value": {tool: 1}})
    return new, ops


class RulesStateUpdater:
    """Deterministic reducer: recent effects for writes, recent observations for reads, counts per tool."""

    engine = ENGINE_RULES
    needs_recent_calls = False
    deferred = False

    async def update(self, ctx: CallContext, response: Any) -> StateChange | None:
        record_reads = bool(ctx.session_config.get("record_reads"))
        if ctx.operation.access == "read" and not record_reads:
            return None
        key = EFFECTS_KEY if ctx.operation.access == "write" else OBSERVED_KEY
        tool = ctx.operation.tool_name
        state, patch = record_call(ctx.state, key, tool, {"tool": tool, "arguments": ctx.arguments, "response": response})
        return StateChange(state=state, patch=patch, engine=self.engine)

    async def bootstrap(self, state: dict[str, Any], toolkits: list[str], usage: list[dict[str, Any]]) -> dict[str, Any]:
        return state

    async def apply_real(self, state: dict[str, Any], calls: list[RealCall], usage: list[dict[str, Any]]) -> StateChange:
        patch: list[dict[str, Any]] = []
        for call in calls:
            tool = call.operation.tool_name if call.operation else (f"{call.toolkit}/{call.name}" if call.toolkit else call.name)
            entry = {"tool": tool, "arguments": call.arguments, "result": call.result, "source": "real"}
            state, ops = record_call(state, OBSERVED_KEY if call.access == "read" else EFFECTS_KEY, tool, entry)
            patch += ops
        return StateChange(state=state, patch=patch, engine=self.engine)
