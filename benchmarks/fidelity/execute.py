"""One trajectory on both sides: the real tools, and Gecko in two sessions.

```
real.state() ──► session S (step-wise) and session R (rollout) start from it
for each call:   real.call → real state after
                 S: set its state to the real state before the call, call, read its state   (next-state measures)
                 R: call, read its state                       (Gecko's own trajectory: errors compound)
                 → one step record: validation, response, state (S), state (R)
then:            official grader on the real execution; Gecko's checklist + judge on R
```

Step-wise is EnvSimBench's setting (each next state predicted from the true current state, so every step is
judged on its own); the rollout shows what an agent would see in a whole simulated episode, and is what the
judge reads. States are read only after steps that are writes (Gecko's read/write kind) or that changed the
real state.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from benchmarks.fidelity.metrics import (
    compare_states,
    flatten,
    key_agreement,
    restrict,
    value_agreement,
    value_pool,
)
from benchmarks.fidelity.model import (
    NO_ERROR,
    STATE_ERROR,
    FidelitySource,
    PlannedCall,
    RealOutcome,
    Trajectory,
)
from inference.gecko import GeckoClient, GeckoJudgeError
from inference.gecko.client import ToolResponse
from inference.tools.catalog import ToolCatalog
from utils.httpstatus import is_success
from utils.schema.fastcheck import FastCheck
from utils.schema.formats import FORMAT_CHECKER


def is_error_body(body: Any) -> bool:
    """A tool result that reports a failure in its body: an object whose only key is `error`."""
    return isinstance(body, Mapping) and set(body) == {"error"}


def is_rejection(response: ToolResponse) -> bool:
    """Gecko refused the call itself: invalid arguments (422) or an unknown tool (a problem+json 404)."""
    if response.status == 422:
        return True
    kind = response.body.get("type", "") if isinstance(response.body, Mapping) else ""
    return response.status == 404 and str(kind).endswith(("unknown-tool", "tool-not-found"))


@dataclass
class SchemaChecks:
    """Compiled response validators, one per (toolkit, operation)."""

    _cache: dict[tuple[str, str], FastCheck | None] = field(default_factory=dict)

    def valid(self, catalog: ToolCatalog, call: PlannedCall, value: Any) -> bool | None:
        """Whether `value` fits the tool's response schema (None: unknown tool or no schema)."""
        spec = catalog.by_original_name(call.name)
        if spec is None:
            return None
        key = (spec.toolkit, spec.operation_id)
        if key not in self._cache:
            schema = spec.response_schema
            self._cache[key] = None if schema is None else FastCheck(
                dict(schema), Draft202012Validator(dict(schema), format_checker=FORMAT_CHECKER))
        validator = self._cache[key]
        return None if validator is None else bool(validator.is_valid(value))


@dataclass(frozen=True)
class GeckoStep:
    """Gecko's answer to one call in one session."""

    status: int
    body: Any
    rejected: bool
    error: bool
    state: dict[str, Any] | None


async def _gecko_call(client: GeckoClient, session_id: str, call: PlannedCall, default_toolkit: str,
                      read_state: bool) -> GeckoStep:
    response = await client.call_tool(session_id, call.toolkit or default_toolkit, call.operation_id or call.name,
                                      dict(call.arguments))
    state = (await client.get_session_state(session_id)).state if read_state else None
    rejected = is_rejection(response)
    error = rejected or not is_success(response.status) or is_error_body(response.body)
    return GeckoStep(response.status, response.body, rejected, error, state)


def _error_kind(call: PlannedCall, real: RealOutcome) -> str:
    if call.perturbation is not None:
        return call.perturbation
    return STATE_ERROR if real.error else NO_ERROR


@dataclass(frozen=True)
class RealStep:
    """The real side of one step: the call's outcome and the states around it (restricted to the roots)."""

    outcome: RealOutcome
    before: Mapping[str, Any]
    after: Mapping[str, Any]
    flat_before: Mapping[str, Any]
    flat_after: Mapping[str, Any]


def step_record(index: int, call: PlannedCall, access: str, real_step: RealStep, stepwise: GeckoStep,
                rollout: GeckoStep, roots: tuple[str, ...], catalog: ToolCatalog,
                schemas: SchemaChecks) -> dict[str, Any]:
    """The measures of one call (JSON; see docs/guides/fidelity.md for each field)."""
    real, before, after = real_step.outcome, real_step.before, real_step.after
    flats = {"flat_before": real_step.flat_before, "flat_after": real_step.flat_after}
    record: dict[str, Any] = {
        "i": index, "tool": call.name, "toolkit": call.toolkit, "access": access, "turn": call.turn,
        "kind": _error_kind(call, real), "real_error": real.error,
        "gecko_status": stepwise.status, "gecko_error": stepwise.error, "gecko_rejected": stepwise.rejected,
        "rollout_error": rollout.error, "response": None, "state": None, "rollout": None,
    }
    if not real.error and not stepwise.error:
        keys = key_agreement(real.output, stepwise.body)
        pool = value_pool(dict(call.arguments), leaves=real_step.flat_after.values())
        fields, matched = value_agreement(real.output, stepwise.body, pool)
        record["response"] = {
            "real_schema": schemas.valid(catalog, call, real.output),
            "gecko_schema": schemas.valid(catalog, call, stepwise.body),
            "keys": None if keys is None else {"jaccard": round(keys.jaccard, 4), "exact": keys.exact},
            "values": [fields, matched],
        }
    if stepwise.state is not None:
        record["state"] = compare_states(before, after, stepwise.state, roots, **flats).public()
    if rollout.state is not None:
        record["rollout"] = compare_states(before, after, rollout.state, roots, **flats).public()
    return record


@dataclass(frozen=True)
class TrajectoryRun:
    """What one trajectory produced."""

    record: dict[str, Any]
    """Step records, judge verdicts, timings (JSON; the checkpoint's record)."""
    trace: dict[str, Any]
    """Calls and outputs on both sides, for debugging (JSON)."""


def _clip(value: Any, limit: int = 400) -> Any:
    text = value if isinstance(value, str) else repr(value)
    return value if len(text) <= limit else text[:limit] + "…"


async def run_trajectory(trajectory: Trajectory, source: FidelitySource, catalog: ToolCatalog, client: GeckoClient,
                         *, judge: bool, labels: Mapping[str, str], schemas: SchemaChecks,
                         keep_sessions: bool = False) -> TrajectoryRun:
    """Run one trajectory on the real tools and in Gecko, step by step; judge it on both sides.

    Raises:
        GeckoError: Gecko failed (the task is untested).
    """
    started = time.perf_counter()
    real = await asyncio.to_thread(source.open, trajectory.task_id)
    roots = real.roots()
    before = real.state()
    flat_before = flatten(restrict(before, roots))
    config = {"toolkits": list(trajectory.toolkits), "labels": {**labels, "trajectory": trajectory.key}}
    stepwise_id = (await client.create_session(config, before)).session_id
    rollout_id = (await client.create_session(config, before)).session_id
    default_toolkit = trajectory.toolkits[0]
    steps: list[dict[str, Any]] = []
    trace_steps: list[dict[str, Any]] = []
    outcomes: list[RealOutcome] = []
    try:
        for index, call in enumerate(trajectory.calls):
            spec = catalog.by_original_name(call.name)
            access = spec.access if spec is not None else "write"
            outcome = real.call(call.name, call.arguments)
            outcomes.append(outcome)
            after = real.state()
            flat_after = flatten(restrict(after, roots))
            read_state = access == "write" or flat_after != flat_before
            if index:
                await client.set_session_state(stepwise_id, before)
            stepwise = await _gecko_call(client, stepwise_id, call, default_toolkit, read_state)
            rollout = await _gecko_call(client, rollout_id, call, default_toolkit, read_state)
            real_step = RealStep(outcome, before, after, flat_before, flat_after)
            steps.append(step_record(index, call, access, real_step, stepwise, rollout, roots, catalog, schemas))
            trace_steps.append({**call.public(), "real": {"error": outcome.error, "output": _clip(outcome.output)},
                                "gecko": {"status": stepwise.status, "body": _clip(stepwise.body)},
                                "rollout": {"status": rollout.status, "body": _clip(rollout.body)}})
            before, flat_before = after, flat_after
        official = await asyncio.to_thread(source.official, trajectory.task_id, real, trajectory.calls, outcomes)
        verdict: bool | None = None
        judge_error = None
        if judge:
            task = source.task_text(trajectory.task_id)
            try:
                checklist = await client.checklist(rollout_id, task)
                reply = await client.judge(rollout_id, task=task, agent_response=source.agent_response(
                    trajectory.task_id), checklist=[item.model_dump() for item in checklist.items])
                verdict = bool(reply.success)
            except GeckoJudgeError as exc:
                judge_error = str(exc)
    finally:
        if not keep_sessions:
            for session_id in (stepwise_id, rollout_id):
                await client.delete_session(session_id)
    elapsed = round(time.perf_counter() - started, 4)
    record = {"source": trajectory.source, "task": trajectory.task_id, "kind": trajectory.kind, "steps": steps,
              "judge": {"official": official, "gecko": verdict, "error": judge_error} if judge else None,
              "seconds": elapsed}
    trace = {"key": trajectory.key, "notes": list(trajectory.notes), "steps": trace_steps,
             "judge": record["judge"], "sessions": [stepwise_id, rollout_id] if keep_sessions else None}
    return TrajectoryRun(record, trace)
