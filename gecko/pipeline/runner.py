"""Run one tool call against a session: the order of stages, serialisation, and the history entry.

Critical path: syntactic validation → semantic check (optional LLM) and response synthesis, run
concurrently (a rejected call discards the response). The state
update runs inline for the rules reducer; an updater with `deferred = True` (the LLM one) runs
after the response is sent, in a background task that keeps holding the session, so the session's
next call still sees the updated state.

Calls to one session queue on the store's hold (`SessionStore.acquire`): in-process FIFO, then the
cross-process lease. No call is ever run twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from gecko.pipeline.stages import CallContext, Engines, RealCall, SemanticVerdict, StateChange
from gecko.pipeline.synthesize.rules import synthesize_rules
from gecko.pipeline.validate.syntactic import Violation, validate_arguments
from gecko.pipeline.world import call_seed
from gecko.sessions.model import Commit, SessionNotFound, SessionRecord
from gecko.sessions.store import Hold, SessionStore
from gecko.toolkits.model import Operation
from gecko.toolkits.registry import ToolNotFound
from gecko.upstream.pool import UpstreamPool
from gecko.upstream.result import UpstreamResult

log = logging.getLogger(__name__)
RECENT_CALLS = 8


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


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def compact_call(entry: dict[str, Any]) -> dict[str, Any]:
    """The part of a history entry that stages and judges need."""
    return {k: entry.get(k) for k in ("tool", "access", "arguments", "status", "response", "errors", "tool_error")}


class CallRunner:
    """Orchestrator shared by all requests of a worker."""

    def __init__(self, store: SessionStore, engines: Engines, needs_recent_calls: bool | None = None,
                 upstreams: UpstreamPool | None = None) -> None:
        """Args:
            store: the session store.
            engines: the stage engines.
            needs_recent_calls: load the last calls of the session for the stages; default: when one of
                the call's stages asks for them (`needs_recent_calls`).
            upstreams: the real services behind toolkits, for hybrid and passthrough sessions (None: none).
        """
        stages = engines.call_stages()
        self.store = store
        self.upstreams = upstreams
        self.engines = engines
        self.needs_recent_calls = (any(stage.needs_recent_calls for stage in stages)
                                   if needs_recent_calls is None else needs_recent_calls)
        self._background: set[asyncio.Task[None]] = set()

    async def run(self, session_id: str, operation: Operation, arguments: Any) -> CallOutcome:
        """Validate, synthesize and update state for one call, serialised per session.

        Raises:
            SessionNotFound: unknown or expired session.
            ToolNotFound: the session's toolkit subset excludes this tool.
            SessionBusy: the session stayed busy past the wait limit.
            NoUpstream: a passthrough session calls a toolkit without an upstream.
            UpstreamError: the real upstream of a hybrid or passthrough call failed (nothing is simulated instead).
        """
        hold = await self.store.acquire(session_id)
        handed_off = False
        try:
            record = await self.store.read(hold)
            if record is None:
                raise SessionNotFound(session_id)
            outcome, commit, pending = await self._run_locked(hold, record, operation, arguments)
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
            if change is not None:
                commit.state, commit.patch = change.state, change.patch
            commit.history["state_version"] = record.version + (commit.state is not None)
            await self.store.commit(hold, record, commit)
        except Exception:  # noqa: BLE001 - nobody awaits this task; make the failure visible in the log
            log.exception("could not commit the deferred state update of session %s", record.id)
        finally:
            await self.store.release(hold)

    async def _run_locked(
        self, hold: Hold, record: SessionRecord, operation: Operation, arguments: Any
    ) -> tuple[CallOutcome, Commit, _Pending | None]:
        session_id, state, config = record.id, record.state, record.config
        allowed = config.get("toolkits")
        if allowed and operation.toolkit not in allowed:
            raise ToolNotFound(f"toolkit {operation.toolkit!r} is not enabled in this session", list(allowed))
        started = time.perf_counter()
        timings: dict[str, float] = {}
        entry: dict[str, Any] = {
            "at": time.time(),
            "tool": operation.tool_name,
            "access": operation.access,
            "arguments": arguments,
        }
        violations = validate_arguments(operation, arguments)
        timings["syntactic"] = _ms(started)
        if violations:
            entry.update(status=422, errors=[v.public() for v in violations],
                         validation={"syntactic": "invalid", "semantic": "skipped"}, timings_ms=timings)
            return CallOutcome(422, None, violations=violations), Commit(history=entry), None
        if self.upstreams is not None and self.upstreams.goes_upstream(operation, config.get("mode") or "simulate"):
            return await self._run_upstream(record, operation, arguments, entry, timings)

        recent: list[dict[str, Any]] = []
        if self.needs_recent_calls:
            recent = [compact_call(e) for e in await self.store.held_history_tail(hold, RECENT_CALLS)]
        usage: list[dict[str, Any]] = []
        ctx = CallContext(session_id, operation, arguments, state, recent, config, usage)

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
            return CallOutcome(422, None, semantic=verdict), Commit(history=entry), None

        synthesis = await synthesis_task
        body, fallback = synthesis.body, synthesis.fallback
        if synthesis.status != 200:
            # The tool's own error (a record the world model does not have): answered, recorded, no state change.
            timings["response"], timings["total"] = _ms(t), _ms(started)
            entry.update(status=synthesis.status, response=body, tool_error=True, validation=validation,
                         engines={"responder": synthesis.engine, "fallback": None, "state": {"engine": None}},
                         timings_ms=timings, usage=usage)
            return CallOutcome(synthesis.status, body, semantic=verdict, tool_error=True), Commit(history=entry), None
        if not operation.response_is_valid(body):
            body = synthesize_rules(operation, arguments, call_seed(session_id, operation.tool_name, arguments))
            fallback = "rules"
        timings["response"] = _ms(t)
        entry.update(
            status=200, response=body, validation=validation,
            engines={"responder": synthesis.engine, "fallback": fallback, "state": {"engine": None}},
            timings_ms=timings, usage=usage,
        )
        updater = self.engines.state
        if updater is not None and updater.deferred and (
                operation.access == "write" or config.get("record_reads")):
            timings["critical_path"] = _ms(started)
            return CallOutcome(200, body, semantic=verdict), Commit(history=entry), _Pending(ctx, body)

        new_state = patch = None
        if updater is not None:
            t = time.perf_counter()
            change = await updater.update(ctx, body)
            timings["state"] = _ms(t)
            if change is not None:
                new_state, patch = change.state, change.patch
                entry["engines"]["state"] = {"engine": change.engine, "fallback": change.fallback,
                                             "patch_ops": len(change.patch)}
        timings["total"] = _ms(started)
        return CallOutcome(200, body, semantic=verdict), Commit(history=entry, state=new_state, patch=patch), None

    async def _run_upstream(self, record: SessionRecord, operation: Operation, arguments: Any,
                            entry: dict[str, Any], timings: dict[str, float]) -> tuple[CallOutcome, Commit, None]:
        """Run a validated call on the real upstream; record a successful result as a real call in the state."""
        assert self.upstreams is not None
        t = time.perf_counter()
        result = await self.upstreams.call(operation, arguments)
        timings["upstream"] = _ms(t)
        usage: list[dict[str, Any]] = []
        new_state = patch = None
        state_info: dict[str, Any] = {"engine": None}
        if self.engines.state is not None and not result.is_error:
            t = time.perf_counter()
            real = RealCall(operation.original_name, arguments, result.recorded(), operation.toolkit, operation,
                            operation.access)
            change = await self.engines.state.apply_real(record.state, [real], usage)
            timings["state"] = _ms(t)
            new_state, patch = change.state, change.patch
            state_info = {"engine": change.engine, "fallback": change.fallback, "patch_ops": len(change.patch)}
        entry.update(status=result.status, source="upstream", upstream_error=result.is_error, response=result.body,
                     validation={"syntactic": "valid", "semantic": "skipped", "semantic_reason": "real upstream"},
                     engines={"responder": "upstream", "state": state_info}, timings_ms=timings, usage=usage)
        return (CallOutcome(200, result.http_body(), upstream=result),
                Commit(history=entry, state=new_state, patch=patch), None)
