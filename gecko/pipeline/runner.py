"""Run one tool call against a session: the order of stages, serialisation, and the history entry.

Critical path: syntactic validation → semantic check (optional LLM) and response synthesis, run
concurrently (a rejected call discards the response). The state
update runs inline for the rules reducer; an updater with `deferred = True` (the LLM one) runs
after the response is sent, in a background task that keeps holding the session, so the session's
next call still sees the updated state.

Calls to one session queue on the store's hold (`SessionStore.acquire`): in-process FIFO, then the
cross-process lease. No call is ever run twice. A call that fails the syntactic check changes nothing and
its verdict does not depend on the session, so it is checked before it queues: if the session is not free
within `REJECTION_WAIT_S` (a deferred LLM state update holds it), the 422 is answered at once and its
history entry is written behind the update, in order.

A session with a fault policy (its own or the server's `--faults`) goes through the state controller
(`gecko.pipeline.faults`) after the syntactic check: an injected fault may answer instead of the call, delay
it, change the state first, or alter its answer; it is recorded as `fault` in the call's history entry.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from gecko.pipeline.faults import FaultPolicies, FaultStep
from gecko.pipeline.stages import CallContext, Engines, RealCall, SemanticVerdict, StateChange
from gecko.pipeline.synthesize.rules import synthesize_rules
from gecko.pipeline.validate.syntactic import Violation, validate_arguments
from gecko.sessions.model import Commit, SessionNotFound, SessionRecord
from gecko.sessions.store import Hold, SessionStore
from gecko.telemetry.logs import current_request_id
from gecko.toolkits.model import Operation
from gecko.toolkits.registry import ToolNotFound
from gecko.upstream.errors import UpstreamError
from gecko.upstream.pool import UpstreamPool
from gecko.upstream.result import UpstreamResult
from utils.faults import ServiceError, with_notice
from utils.httpstatus import is_success
from utils.jsonlimits import READABLE_DEPTH, is_readable, is_readable_change

log = logging.getLogger(__name__)
RECENT_CALLS = 8
_UNREADABLE_STATE = f"the updated state nests deeper than {READABLE_DEPTH} levels; it was not stored"
REJECTION_WAIT_S = 0.25
"""Longest wait of a syntactically invalid call for its session before it is answered without it."""


@dataclass
class CallOutcome:
    """What the HTTP layer turns into a response."""

    status: int
    body: Any
    violations: list[Violation] = field(default_factory=list)
    semantic: SemanticVerdict | None = None
    state_version: int = 0
    state_pending: bool = False
    """True when the state update is still running (deferred); `state_version` is then the version it will have."""
    upstream: UpstreamResult | None = None
    """Set when a real upstream answered (hybrid or passthrough session); `body` is then its HTTP body."""
    fault: dict[str, Any] | None = None
    """The injected fault (the history entry's `fault` record), when the state controller intervened."""
    service_error: ServiceError | None = None
    """The error of a blocking fault (the call's answer instead of `body`)."""
    notice: str | None = None
    """A constraint notice delivered with this answer (HTTP: in the body; MCP: an extra text block)."""

    def http_body(self) -> Any:
        """The JSON body of a successful answer, with the notice attached when there is one."""
        body = self.upstream.http_body() if self.upstream is not None else self.body
        return body if self.notice is None else with_notice(body, self.notice)

    def errors(self) -> list[dict[str, str]]:
        """Every reason a rejected call was rejected: pointer, keyword, message and source."""
        if self.violations:
            return [{**v.public(), "source": "syntactic"} for v in self.violations]
        return [{"pointer": "", "keyword": "semantic", "message": m, "source": "semantic"}
                for m in (self.semantic.errors if self.semantic else [])]

    def detail(self) -> str:
        """The readable problem detail of a rejected call: what the agent can act on."""
        return " ".join(e["message"] for e in self.errors()) or "The arguments were rejected."

    @property
    def semantic_outcome(self) -> str:
        """`valid`, `invalid`, `unchecked` or `skipped` (no semantic validator)."""
        return self.semantic.outcome if self.semantic else "skipped"
    tool_error: bool = False
    """The simulated tool answered with an error status of its API (`status`, e.g. 404), not Gecko refusing the call."""


@dataclass
class _Pending:
    """A deferred state update: what it needs to finish the call later."""

    ctx: CallContext
    body: Any
    whole_state: bool = False
    """The state changed before the call too (an injected external change): store the new state whole."""


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def is_tool_call(entry: dict[str, Any]) -> bool:
    """Whether a history entry is a tool call (not a `#` entry: state set from outside, checklist, verdict)."""
    return not str(entry.get("tool", "")).startswith("#")


def compact_call(entry: dict[str, Any]) -> dict[str, Any]:
    """The part of a history entry that stages and judges need (`fault` only when one was injected)."""
    call = {k: entry.get(k) for k in ("tool", "access", "arguments", "status", "response", "errors", "tool_error")}
    if entry.get("fault"):
        call["fault"] = entry["fault"]
    if entry.get("message") is not None:
        call["message"] = entry["message"]
    return call


class CallRunner:
    """Orchestrator shared by all requests of a worker."""

    def __init__(self, store: SessionStore, engines: Engines, needs_recent_calls: bool | None = None,
                 upstreams: UpstreamPool | None = None, faults: FaultPolicies | None = None) -> None:
        """Args:
            store: the session store.
            engines: the stage engines.
            needs_recent_calls: load the last calls of the session for the stages; default: when one of
                the call's stages asks for them (`needs_recent_calls`).
            upstreams: the real services behind toolkits, for hybrid and passthrough sessions (None: none).
            faults: the worker's fault policies (None: no server-wide policy; sessions may still have their own).
        """
        stages = engines.call_stages()
        self.store = store
        self.upstreams = upstreams
        self.faults = faults if faults is not None else FaultPolicies(None)
        self.engines = engines
        self.needs_recent_calls = (any(stage.needs_recent_calls for stage in stages)
                                   if needs_recent_calls is None else needs_recent_calls)
        self._background: set[asyncio.Task[Any]] = set()

    async def run(self, session_id: str, operation: Operation, arguments: Any,
                  message: str | None = None) -> CallOutcome:
        """Validate, synthesize and update state for one call, serialised per session. `message`: the id of the
        model message that issued the call (recorded in its history entry; see `JudgeInput.call_messages`).

        Raises:
            SessionNotFound: unknown or expired session.
            ToolNotFound: the session's toolkit subset excludes this tool.
            SessionBusy: the session stayed busy past the wait limit.
            NoUpstream: a passthrough session calls a toolkit without an upstream.
            UpstreamError: the real upstream of a hybrid or passthrough call failed (nothing is simulated instead).
        """
        started = time.perf_counter()
        violations = validate_arguments(operation, arguments)
        syntactic_ms = _ms(started)
        if violations:
            return await self._reject(session_id, operation, arguments, violations, syntactic_ms, message)
        hold = await self.store.acquire(session_id)
        handed_off = False
        try:
            record = await self.store.read(hold)
            if record is None:
                raise SessionNotFound(session_id)
            outcome, commit, pending = await self._run_locked(hold, record, operation, arguments, syntactic_ms)
            if message is not None and commit.history is not None:
                commit.history["message"] = message
            request_id = current_request_id()
            if request_id is not None and commit.history is not None:
                commit.history["request_id"] = request_id  # the HTTP request's X-Request-ID (and its log lines')
            if pending is not None:
                outcome.state_version, outcome.state_pending = record.version + 1, True
                task = asyncio.create_task(self._finish_deferred(hold, record, commit, pending))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
                handed_off = True
                return outcome
            if commit.history is not None:
                commit.history["state_version"] = record.version + (commit.state is not None)
            outcome.state_version = await self.store.commit(hold, record, commit)
            return outcome
        finally:
            if not handed_off:
                await self.store.release(hold)

    async def _reject(self, session_id: str, operation: Operation, arguments: Any, violations: list[Violation],
                      syntactic_ms: float, message: str | None = None) -> CallOutcome:
        """A 422 for a call that failed the syntactic check, recorded in the history without making it wait on
        a busy session (see the module docstring)."""
        entry: dict[str, Any] = {
            "at": time.time(), "tool": operation.tool_name, "access": operation.access, "arguments": arguments,
            "status": 422, "errors": [v.public() for v in violations],
            "validation": {"syntactic": "invalid", "semantic": "skipped"}, "timings_ms": {"syntactic": syntactic_ms},
        }
        if message is not None:
            entry["message"] = message
        request_id = current_request_id()
        if request_id is not None:
            entry["request_id"] = request_id
        recording = asyncio.create_task(self._record_rejection(session_id, operation, entry))
        done, _ = await asyncio.wait({recording}, timeout=REJECTION_WAIT_S)
        if recording in done:
            return CallOutcome(422, None, violations=violations, state_version=recording.result())
        record = await self.store.get(session_id)
        problem: Exception | None = None
        if record is None:
            problem = SessionNotFound(session_id)
        elif record.config.get("toolkits") and operation.toolkit not in record.config["toolkits"]:
            problem = ToolNotFound(f"toolkit {operation.toolkit!r} is not enabled in this session",
                                   list(record.config["toolkits"]))
        if problem is not None:
            recording.cancel()
            raise problem
        assert record is not None
        self._background.add(recording)
        recording.add_done_callback(self._rejection_recorded)
        return CallOutcome(422, None, violations=violations, state_version=record.version)

    async def _record_rejection(self, session_id: str, operation: Operation, entry: dict[str, Any]) -> int:
        """Append a rejected call to the session's history (queued like any call); returns the state version."""
        async with self.store.holding(session_id) as hold:
            record = await self.store.read(hold)
            if record is None:
                raise SessionNotFound(session_id)
            allowed = record.config.get("toolkits")
            if allowed and operation.toolkit not in allowed:
                raise ToolNotFound(f"toolkit {operation.toolkit!r} is not enabled in this session", list(allowed))
            entry["state_version"] = record.version
            return await self.store.commit(hold, record, Commit(history=entry))

    def _rejection_recorded(self, task: asyncio.Task[int]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a rejected call could not be recorded in the history: %s", task.exception())

    async def drain(self) -> None:
        """Wait for deferred state updates (called at shutdown so none is lost)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    async def _finish_deferred(self, hold: Hold, record: SessionRecord, commit: Commit, pending: _Pending) -> None:
        try:
            started = time.perf_counter()
            change: StateChange | None = None
            try:
                assert self.engines.state is not None
                change = await self.engines.state.update(pending.ctx, pending.body)
                state_info: dict[str, Any] = ({"engine": change.engine, "fallback": change.fallback,
                                               "patch_ops": len(change.patch), "deferred": True}
                                              if change else {"engine": self.engines.state.engine, "deferred": True})
            except Exception as exc:  # noqa: BLE001 - recorded in history; the call already succeeded
                log.exception("deferred state update failed for session %s", record.id)
                state_info = {"engine": self.engines.state.engine if self.engines.state else None,
                              "error": f"{type(exc).__name__}: {exc}", "deferred": True}
            assert commit.history is not None
            commit.history["engines"]["state"] = state_info
            commit.history["timings_ms"]["state"] = _ms(started)
            commit.history["usage"] = pending.ctx.usage
            if change is not None and not is_readable_change(change.state,
                                                             None if pending.whole_state else change.patch):
                state_info = {**state_info, "error": _UNREADABLE_STATE}
                change = None
            if change is not None:
                commit.state, commit.patch = change.state, None if pending.whole_state else change.patch
            commit.history["state_version"] = record.version + (commit.state is not None)
            await self.store.commit(hold, record, commit)
        except Exception:  # noqa: BLE001 - nobody awaits this task; make the failure visible in the log
            log.exception("could not commit the deferred state update of session %s", record.id)
        finally:
            await self.store.release(hold)

    async def _run_locked(
        self, hold: Hold, record: SessionRecord, operation: Operation, arguments: Any, syntactic_ms: float
    ) -> tuple[CallOutcome, Commit, _Pending | None]:
        session_id, state, config = record.id, record.state, record.config
        allowed = config.get("toolkits")
        if allowed and operation.toolkit not in allowed:
            raise ToolNotFound(f"toolkit {operation.toolkit!r} is not enabled in this session", list(allowed))
        started = time.perf_counter()
        timings: dict[str, float] = {"syntactic": syntactic_ms}
        entry: dict[str, Any] = {
            "at": time.time(),
            "tool": operation.tool_name,
            "access": operation.access,
            "arguments": arguments,
        }
        upstream = self.upstreams is not None and self.upstreams.goes_upstream(operation, config.get("mode") or "simulate")
        policy = self.faults.policy_for(config)  # the no-fault path: this check only
        fault = None if policy is None else await self.faults.step(
            self.store, record, policy, operation, arguments, "real" if upstream else "simulated")
        changed: dict[str, Any] | None = None
        if fault is not None and fault.injection is not None:
            entry["fault"] = fault.record
            if fault.blocks():
                return self._fault_answer(operation, entry, timings, fault)
            await fault.wait()
            changed = fault.changed_state(state)
            state = changed if changed is not None else state
        if upstream:
            return await self._run_upstream(record, operation, arguments, entry, timings, fault, state, changed)

        recent: list[dict[str, Any]] = []
        if self.needs_recent_calls:
            recent = [compact_call(e) for e in await self.store.held_history_tail(hold, RECENT_CALLS)
                      if is_tool_call(e)]
        usage: list[dict[str, Any]] = []
        ctx = CallContext(session_id, operation, arguments, state, recent, config, usage, hold.owned)

        # The semantic check and the response are independent: run them together, so the critical path
        # costs one LLM round trip; a rejected call discards its response.
        t = time.perf_counter()
        synthesis_task = asyncio.create_task(self.engines.response.synthesize(ctx))
        verdict = SemanticVerdict("skipped", reason="no semantic validator configured")
        if self.engines.validation is not None:
            try:
                verdict = await self.engines.validation.check(ctx)
            except BaseException:
                synthesis_task.cancel()
                raise
            timings["semantic"] = _ms(t)
        validation: dict[str, str] = {"syntactic": "valid", "semantic": verdict.outcome}
        if verdict.reason:
            validation["semantic_reason"] = verdict.reason
        if verdict.outcome == "invalid":
            synthesis_task.cancel()
            errors = [{"pointer": "", "keyword": "semantic", "message": m, "source": "semantic"} for m in verdict.errors]
            entry.update(status=422, errors=errors, validation=validation, timings_ms=timings, usage=usage)
            commit = Commit(history=entry, state=changed,
                            config=fault.commit_config(operation.access, False) if fault is not None else None)
            return CallOutcome(422, None, semantic=verdict), commit, None

        synthesis = await synthesis_task
        body, fallback = synthesis.body, synthesis.fallback
        if synthesis.status >= 400:
            # The tool's own error (a record the world model does not have): answered, recorded, no state change.
            timings["response"], timings["total"] = _ms(t), _ms(started)
            entry.update(status=synthesis.status, response=body, tool_error=True, validation=validation,
                         engines={"responder": synthesis.engine, "fallback": None, "state": {"engine": None}},
                         timings_ms=timings, usage=usage)
            return CallOutcome(synthesis.status, body, semantic=verdict, tool_error=True), Commit(history=entry), None
        if not operation.response_is_valid(body) or not is_readable(body):
            body = synthesize_rules(operation, arguments, ctx.seed)
            fallback = "rules"
        timings["response"] = _ms(t)
        if synthesis.notes:
            entry["notes"] = list(synthesis.notes)
        if not operation.success_has_body:
            body = None  # the operation declares no content (204): nothing to show, nothing to store
        entry.update(
            status=operation.success_status, response=body, validation=validation,
            engines={"responder": synthesis.engine, "fallback": fallback, "state": {"engine": None}},
            timings_ms=timings, usage=usage,
        )
        outcome = CallOutcome(operation.success_status, body, semantic=verdict)
        commit = Commit(history=entry, state=changed)
        if fault is not None:
            self._fault_effects(record, operation, entry, outcome, commit, fault)
        updater = self.engines.state
        if updater is not None and updater.deferred and (
                operation.access == "write" or config.get("record_reads")):
            timings["critical_path"] = _ms(started)
            return outcome, commit, _Pending(ctx, body, whole_state=changed is not None)

        if updater is not None:
            t = time.perf_counter()
            change = await updater.update(ctx, body)
            timings["state"] = _ms(t)
            if change is not None and not is_readable_change(change.state,
                                                             None if changed is not None else change.patch):
                entry["engines"]["state"] = {"engine": change.engine, "error": _UNREADABLE_STATE}
                change = None
            if change is not None:
                commit.state, commit.patch = change.state, None if changed is not None else change.patch
                entry["engines"]["state"] = {"engine": change.engine, "fallback": change.fallback,
                                             "patch_ops": len(change.patch)}
        timings["total"] = _ms(started)
        return outcome, commit, None

    @staticmethod
    def _fault_answer(operation: Operation, entry: dict[str, Any], timings: dict[str, float],
                      fault: FaultStep) -> tuple[CallOutcome, Commit, None]:
        """A call the controller answers itself: a blocking fault's error, or a stale read's earlier answer."""
        entry.update(validation={"syntactic": "valid", "semantic": "skipped", "semantic_reason": "injected fault"},
                     timings_ms=timings)
        config = fault.commit_config(operation.access, False)
        error = fault.error()
        if error is None:  # a stale read
            assert fault.earlier is not None
            entry.update(status=operation.success_status, response=fault.earlier.value)
            return (CallOutcome(operation.success_status, fault.earlier.value, fault=fault.record),
                    Commit(history=entry, config=config), None)
        entry.update(status=error.status, errors=[{"pointer": "", "keyword": error.slug, "message": error.detail,
                                                   "source": "fault"}])
        outcome = CallOutcome(error.status, None, fault=fault.record, service_error=error)
        return outcome, Commit(history=entry, config=config), None

    @staticmethod
    def _fault_effects(record: SessionRecord, operation: Operation, entry: dict[str, Any], outcome: CallOutcome,
                       commit: Commit, fault: FaultStep) -> None:
        """What a fault does to a call that ran: its answer, a notice and a checklist item, the controller state."""
        outcome.fault = fault.record or None
        error = fault.error()  # a timeout whose call ran: the effects stay, the answer is lost
        if error is not None:
            outcome.status, outcome.service_error = error.status, error
            entry.update(status=error.status, errors=[{"pointer": "", "keyword": error.slug, "message": error.detail,
                                                       "source": "fault"}])
        elif outcome.upstream is not None:
            body = outcome.upstream.http_body()
            damaged = fault.answer(body)
            if damaged is not body:
                outcome.upstream = dataclasses.replace(outcome.upstream, body=damaged, content=None, structured=None)
                outcome.body = entry["response"] = damaged
        else:
            outcome.body = entry["response"] = fault.answer(outcome.body)
        notice = fault.notice(record.checklists)
        if notice is not None:
            outcome.notice, commit.checklists = notice
        ran_ok = outcome.upstream is None or not outcome.upstream.is_error
        commit.config = fault.commit_config(operation.access, ran_ok)

    async def _run_upstream(self, record: SessionRecord, operation: Operation, arguments: Any,
                            entry: dict[str, Any], timings: dict[str, float], fault: FaultStep | None,
                            state: dict[str, Any], changed: dict[str, Any] | None) -> tuple[CallOutcome, Commit, None]:
        """Run a validated call on the real upstream; record a successful result as a real call in the state."""
        assert self.upstreams is not None
        t = time.perf_counter()
        result = await self.upstreams.call(operation, arguments)
        timings["upstream"] = _ms(t)
        if not is_readable(result.body):
            raise UpstreamError(f"the real service answered with JSON nested deeper than {READABLE_DEPTH} levels, "
                                "which Gecko cannot store and give back; nothing was recorded")
        usage: list[dict[str, Any]] = []
        new_state, patch = changed, None
        state_info: dict[str, Any] = {"engine": None}
        if self.engines.state is not None and not result.is_error:
            t = time.perf_counter()
            real = RealCall(operation.original_name, arguments, result.recorded(), operation.toolkit, operation,
                            operation.access)
            change = await self.engines.state.apply_real(state, [real], usage)
            timings["state"] = _ms(t)
            if is_readable_change(change.state, None if changed is not None else change.patch):
                new_state, patch = change.state, None if changed is not None else change.patch
                state_info = {"engine": change.engine, "fallback": change.fallback, "patch_ops": len(change.patch)}
            else:
                state_info = {"engine": change.engine, "error": _UNREADABLE_STATE}
        entry.update(status=result.status, source="upstream", upstream_error=result.is_error, response=result.body,
                     validation={"syntactic": "valid", "semantic": "skipped", "semantic_reason": "real upstream"},
                     engines={"responder": "upstream", "state": state_info}, timings_ms=timings, usage=usage)
        outcome = CallOutcome(result.status if is_success(result.status) else 200, result.http_body(), upstream=result)
        commit = Commit(history=entry, state=new_state, patch=patch)
        if fault is not None:
            self._fault_effects(record, operation, entry, outcome, commit, fault)
        return outcome, commit, None
