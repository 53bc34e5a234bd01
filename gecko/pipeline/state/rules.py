"""Rules state reducer.

Conventions (documented in the README):
- a successful write call appends `{"tool", "arguments", "response"}` to `state["effects"]`;
- reads leave the state unchanged (unless the session records reads: then they go to `state["observed"]`);
- `/update-state-from-real`: read results are recorded under `state["observed"]`, write results are
  appended to `state["effects"]` with `"source": "real"`.
"""

from __future__ import annotations

from typing import Any

from gecko.pipeline.stages import CallContext, RealCall, StateChange
from utils.roles import ENGINE_RULES

EFFECTS_KEY = "effects"
OBSERVED_KEY = "observed"


def _append(state: dict[str, Any], key: str, entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A new state with `entry` appended to `state[key]`; `state` itself is not modified.

    States are treated as immutable values, so the copy is shallow: the untouched parts are shared.
    """
    new = dict(state)
    if isinstance(state.get(key), list):
        new[key] = [*state[key], entry]
        return new, {"op": "add", "path": f"/{key}/-", "value": entry}
    new[key] = [entry]
    return new, {"op": "add", "path": f"/{key}", "value": [entry]}


class RulesStateUpdater:
    """Deterministic reducer: effects for writes, observations for reads."""

    engine = ENGINE_RULES
    needs_recent_calls = False
    deferred = False

    async def update(self, ctx: CallContext, response: Any) -> StateChange | None:
        record_reads = bool(ctx.session_config.get("record_reads"))
        if ctx.operation.access == "read" and not record_reads:
            return None
        key = EFFECTS_KEY if ctx.operation.access == "write" else OBSERVED_KEY
        entry = {"tool": ctx.operation.tool_name, "arguments": ctx.arguments, "response": response}
        state, op = _append(ctx.state, key, entry)
        return StateChange(state=state, patch=[op], engine=self.engine)

    async def bootstrap(self, state: dict[str, Any], toolkits: list[str], usage: list[dict[str, Any]]) -> dict[str, Any]:
        return state

    async def apply_real(self, state: dict[str, Any], calls: list[RealCall], usage: list[dict[str, Any]]) -> StateChange:
        patch: list[dict[str, Any]] = []
        for call in calls:
            tool = call.operation.tool_name if call.operation else (f"{call.toolkit}/{call.name}" if call.toolkit else call.name)
            entry = {"tool": tool, "arguments": call.arguments, "result": call.result, "source": "real"}
            state, op = _append(state, OBSERVED_KEY if call.access == "read" else EFFECTS_KEY, entry)
            patch.append(op)
        return StateChange(state=state, patch=patch, engine=self.engine)
