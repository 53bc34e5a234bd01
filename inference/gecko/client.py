"""`GeckoClient`: async HTTP client for every endpoint of the Gecko server.

One client (one connection pool) serves every task of a run. Each request has a timeout. Transport
failures are retried with exponential back-off: every kind for idempotent requests (reads, deletes,
checklist, judge), and for the others (tool calls, session creation, forks) only failures where the
request was never sent (connect errors, pool timeouts), so a call is never executed twice. HTTP statuses
are never retried: 5xx raise `GeckoUnavailableError`, other 4xx `GeckoRequestError` (see `errors.py`).

A tool call returns a `ToolResponse` for 200, for 422 validation errors and for the other refusals of the
call itself (unknown tool, oversized body): the agent reads them as the tool's result.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from inference.gecko.errors import (
    GeckoError,
    GeckoJudgeError,
    GeckoNotFoundError,
    GeckoRequestError,
    GeckoUnavailableError,
)
from inference.gecko.http_aiohttp import AiohttpTransport, Reply
from inference.gecko.models import (
    ChecklistReply,
    HealthInfo,
    JudgeReply,
    SessionInfo,
    StateReply,
    ToolSearchReply,
)
from utils.httpstatus import is_success

log = logging.getLogger("inference.gecko")
SESSION_HEADER = "X-Session-ID"
MESSAGE_HEADER = "X-Gecko-Message"
TOOL_ERROR_HEADER = "X-Gecko-Tool-Error"
FAULT_HEADER = "X-Gecko-Fault"
"""Gecko's record of a fault its state controller injected into a call (compact JSON)."""
HISTORY_PAGE = 1000
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
Sleep = Callable[[float], Awaitable[None]]
Response = httpx.Response | Reply
"""What a request returns: httpx's response (a transport passed in) or the cheap `Reply` (the default)."""


@dataclass(frozen=True)
class ToolResponse:
    """Gecko's answer to one tool call."""

    status: int
    """200, 422 (invalid arguments), 404 (unknown tool) or another 4xx refusal; or the simulated tool's own error
    status (`tool_error`)."""
    body: Any
    """The tool's response (200, or its error answer when `tool_error`) or the problem body."""
    state_version: int | None = None
    semantic: str | None = None
    """Outcome of the semantic check (`valid`, `invalid`, `unchecked`, `skipped`), from `X-Gecko-Semantic`."""
    tool_error: bool = False
    """The simulated API answered with an error of its own (e.g. its declared 404 for a record that does not
    exist; header `X-Gecko-Tool-Error`): a tool result, not Gecko refusing the call."""
    fault: dict[str, Any] | None = None
    """The state controller's injection record (`X-Gecko-Fault`), when it intervened in the call."""

    @property
    def ok(self) -> bool:
        """True for a success (any 2xx: a create may answer 201, a delete 204) that is not the tool's own error."""
        return is_success(self.status) and not self.tool_error

    @property
    def errors(self) -> list[dict[str, Any]]:
        """`errors[]` of a problem body: `{pointer, keyword, message, source}` each."""
        if self.ok or not isinstance(self.body, dict):
            return []
        return [e for e in self.body.get("errors", []) if isinstance(e, dict)]

    @property
    def detail(self) -> str:
        """The problem's readable `detail` ("" for 200)."""
        if self.ok or not isinstance(self.body, dict):
            return ""
        return str(self.body.get("detail", ""))


def _problem(response: Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {"detail": response.text[:500]}
    return body if isinstance(body, dict) else {"detail": str(body)[:500]}


def _fault_record(header: str | None) -> dict[str, Any] | None:
    if not header:
        return None
    try:
        record = json.loads(header)
    except ValueError:
        return {"kind": "unknown", "raw": header[:200]}
    return record if isinstance(record, dict) else {"kind": "unknown", "raw": header[:200]}


def _raise_for(response: Response, what: str) -> None:
    if response.is_success:
        return
    problem = _problem(response)
    message = f"{what}: HTTP {response.status_code}: {problem.get('detail') or problem.get('title') or ''}"
    if response.status_code == 502 and str(problem.get("type", "")).endswith("judge-failed"):
        raise GeckoJudgeError(message, response.status_code, problem)
    if response.status_code >= 500:
        raise GeckoUnavailableError(message, response.status_code, problem)
    if response.status_code == 404:
        raise GeckoNotFoundError(message, response.status_code, problem)
    raise GeckoRequestError(message, response.status_code, problem)


class GeckoClient:
    """Async client of one Gecko server.

    Args:
        base_url: e.g. `http://127.0.0.1:8000` (runners take it from `Settings.gecko_url`).
        timeout_s: per-request timeout (judge and checklist calls may run an LLM: keep it generous).
        max_connections: pool size.
        retries: extra tries after a transport failure (see the module docstring for which).
        backoff_s: first back-off; doubles on each retry.
        api_key: sent as `Authorization: Bearer …` when Gecko runs with `--api-key`.
        transport: an httpx transport (tests pass `httpx.MockTransport` or `httpx.ASGITransport`); default:
            the aiohttp adapter `inference.gecko.http_aiohttp` (much less CPU per request than httpcore's
            pool, and it tells a request never sent from one that may have reached Gecko).
        sleep: awaited between retries (tests pass a no-op).
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 120.0,
        max_connections: int = 64,
        retries: int = 3,
        backoff_s: float = 0.25,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._fast: AiohttpTransport | None = None
        if transport is None:  # the default: requests skip httpx's models (`_fast_request`)
            transport = self._fast = AiohttpTransport(max_connections)
        self._headers = headers
        self._timeout_s = timeout_s
        self.base_url = base_url.rstrip("/")
        self.has_api_key = bool(api_key)
        """Whether requests carry an API key (for messages; the key itself is not kept here)."""
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout_s, limits=limits,
                                       headers=headers, transport=transport)
        self._retries = retries
        self._backoff_s = backoff_s
        self._sleep = sleep

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> GeckoClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _send(
        self, method: str, path: str, *, idempotent: bool, json: Any = None, params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        retryable = httpx.TransportError if idempotent else _NOT_SENT
        delay = self._backoff_s
        for attempt in range(self._retries + 1):
            try:
                if self._fast is not None:
                    return await self._fast_request(method, path, json, params, headers)
                return await self._http.request(method, path, json=json, params=params, headers=headers)
            except retryable as exc:
                if attempt == self._retries:
                    log.warning("Gecko %s %s failed for good after %d tries: %s: %s", method, path, attempt + 1,
                                type(exc).__name__, exc)
                    raise GeckoUnavailableError(
                        f"Gecko {method} {path}: {type(exc).__name__} after {attempt + 1} tries: {exc}") from exc
                log.warning("Gecko %s %s failed (%s: %s); retry %d in %.1f s", method, path, type(exc).__name__,
                            exc, attempt + 1, delay)
                await self._sleep(delay)
                delay *= 2
            except httpx.TransportError as exc:
                raise GeckoUnavailableError(f"Gecko {method} {path}: {type(exc).__name__}: {exc}") from exc
        raise AssertionError("unreachable")

    async def _fast_request(self, method: str, path: str, payload: Any, params: Mapping[str, Any] | None,
                            headers: Mapping[str, str] | None) -> Reply:
        """One request on the default transport without httpx's models (JSON encoded as httpx encodes it)."""
        assert self._fast is not None
        url = self.base_url + path + (f"?{urlencode(params)}" if params else "")
        sent = dict(self._headers)
        body = None
        if payload is not None:
            body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
            sent["Content-Type"] = "application/json"
        if headers:
            sent.update(headers)
        return await self._fast.send(method, url, sent, body, self._timeout_s)

    async def _json(self, method: str, path: str, *, idempotent: bool, what: str, **kwargs: Any) -> Any:
        response = await self._send(method, path, idempotent=idempotent, **kwargs)
        _raise_for(response, what)
        try:
            return response.json()
        except ValueError as exc:
            raise GeckoUnavailableError(f"{what}: the reply is not JSON", response.status_code) from exc

    # --- server -------------------------------------------------------------------------------------------

    async def health(self) -> HealthInfo:
        """`GET /health`: status, models and engines of every role, store, toolkit count, workers."""
        return HealthInfo.model_validate(await self._json("GET", "/health", idempotent=True, what="health"))

    async def metrics(self) -> str:
        """`GET /metrics` (Prometheus text)."""
        response = await self._send("GET", "/metrics", idempotent=True)
        _raise_for(response, "metrics")
        return response.text

    async def toolkits(self, *, tools: bool = True, limit: int = 100000, offset: int = 0) -> dict[str, Any]:
        """`GET /toolkits`: `{total, offset, toolkits: [...]}`."""
        params = {"tools": str(tools).lower(), "limit": limit, "offset": offset}
        return await self._json("GET", "/toolkits", idempotent=True, what="toolkits", params=params)

    async def toolkit(self, name: str) -> dict[str, Any]:
        """`GET /toolkits/{name}`: the toolkit with each tool's argument and response schema.

        Raises:
            GeckoNotFoundError: Gecko has no toolkit of that name.
        """
        return await self._json("GET", f"/toolkits/{quote(name, safe='')}", idempotent=True,
                                what=f"toolkit {name!r}")

    async def search_tools(self, query: str, k: int = 10, *, toolkit: str | None = None,
                           access: str | None = None, mode: str | None = None) -> ToolSearchReply:
        """`GET /tools/search`: the `k` tools that best match `query`, optionally in one toolkit or of one access kind,
        ranked by `mode` (`bm25`, `dense`, `hybrid`; default: the server's).

        Raises:
            GeckoNotFoundError: `toolkit` is not served.
            GeckoRequestError: Gecko refused the query (empty, too long, bad `k` or `mode`), or the ranking is not
                installed or is turned off there (501).
        """
        params: dict[str, Any] = {"q": query, "k": k}
        if mode is not None:
            params["mode"] = mode
        if toolkit is not None:
            params["toolkit"] = toolkit
        if access is not None:
            params["access"] = access
        return ToolSearchReply.model_validate(await self._json("GET", "/tools/search", idempotent=True,
                                                               what="tool search", params=params))

    # --- sessions -----------------------------------------------------------------------------------------

    async def create_session(
        self, config: Mapping[str, Any] | None = None, state: Mapping[str, Any] | None = None
    ) -> SessionInfo:
        """`POST /sessions` with a session config (`toolkits`, `labels`, `record_reads`) and a state."""
        body = {"config": dict(config or {}), "state": dict(state or {})}
        return SessionInfo.model_validate(
            await self._json("POST", "/sessions", idempotent=False, what="create session", json=body))

    async def get_session(self, session_id: str) -> SessionInfo:
        """`GET /sessions/{id}`."""
        return SessionInfo.model_validate(await self._json(
            "GET", f"/sessions/{session_id}", idempotent=True, what=f"session {session_id}"))

    async def history(self, session_id: str, *, limit: int = HISTORY_PAGE, offset: int = 0) -> list[dict[str, Any]]:
        """One page of `GET /sessions/{id}/history`: request, validation, response, timings, usage per call."""
        body = await self._json("GET", f"/sessions/{session_id}/history", idempotent=True,
                                what=f"history of {session_id}", params={"limit": limit, "offset": offset})
        return list(body.get("calls", []))

    async def full_history(self, session_id: str) -> list[dict[str, Any]]:
        """Every history entry of a session (all pages)."""
        calls: list[dict[str, Any]] = []
        while True:
            page = await self.history(session_id, limit=HISTORY_PAGE, offset=len(calls))
            calls.extend(page)
            if len(page) < HISTORY_PAGE:
                return calls

    async def session_usage(self, session_id: str) -> list[dict[str, Any]]:
        """LLM usage records of the server stages (validator, responder, state) over a session's history."""
        return [record for entry in await self.full_history(session_id) for record in entry.get("usage") or []]

    async def session_state(self, session_id: str, version: int | None = None) -> StateReply:
        """`GET /sessions/{id}/state`: the current state, or the snapshot at `version`."""
        params = {} if version is None else {"version": version}
        return StateReply.model_validate(await self._json(
            "GET", f"/sessions/{session_id}/state", idempotent=True, what=f"state of {session_id}", params=params))

    async def fork(self, session_id: str, *, labels: Mapping[str, str] | None = None, note: str | None = None,
                   **replace: Mapping[str, Any] | None) -> SessionInfo:
        """`POST /sessions/{id}/fork`: a new session with a copy of this one's state and config.

        Args:
            session_id: the session to copy.
            labels: labels of the fork, over the parent's (shown in Gecko's viewer).
            note: why the fork exists (GATS: the feedback its attempt is given).
            **replace: `faults=policy` gives the fork this fault policy instead of the inherited one (its count
                starts afresh); `faults=None` gives it none of its own (the server's `--faults`, if any, applies).
        """
        unknown = set(replace) - {"faults"}
        if unknown:
            raise TypeError(f"fork() takes only labels=, note= and faults=..., not {', '.join(sorted(unknown))}")
        body: dict[str, Any] = {}
        if replace:
            body["faults"] = dict(replace["faults"]) if replace["faults"] is not None else None
        if labels:
            body["labels"] = dict(labels)
        if note:
            body["note"] = note
        return SessionInfo.model_validate(await self._json(
            "POST", f"/sessions/{session_id}/fork", idempotent=False, what=f"fork {session_id}", json=body or None))

    async def faults(self, session_id: str) -> dict[str, Any]:
        """`GET /sessions/{id}/faults`: the policy in effect (`source`: session, server, none), the controller's
        state, the injections recorded in the history, and the checklist items constraints added."""
        return await self._json("GET", f"/sessions/{session_id}/faults", idempotent=True,
                                what=f"faults of {session_id}")

    async def set_faults(self, session_id: str, policy: Mapping[str, Any] | None) -> dict[str, Any]:
        """`PUT /sessions/{id}/faults` (a policy document, as `utils.faults.FaultPolicy.public()` gives it), or
        `DELETE` for None (the server's `--faults`, if any, applies again). Returns what `faults` returns.

        Raises:
            GeckoRequestError: the policy is invalid (the message lists every problem).
        """
        if policy is None:
            return await self._json("DELETE", f"/sessions/{session_id}/faults", idempotent=True,
                                    what=f"clear faults of {session_id}")
        return await self._json("PUT", f"/sessions/{session_id}/faults", idempotent=True,
                                what=f"set faults of {session_id}", json=dict(policy))

    async def delete_session(self, session_id: str, *, missing_ok: bool = True) -> bool:
        """`DELETE /sessions/{id}`; returns False when it did not exist (and `missing_ok`)."""
        response = await self._send("DELETE", f"/sessions/{session_id}", idempotent=True)
        if response.status_code == 404 and missing_ok:
            return False
        _raise_for(response, f"delete {session_id}")
        return True

    async def checklist(self, session_id: str, task: str, previous_tasks: Sequence[str] = ()) -> ChecklistReply:
        """`POST /sessions/{id}/checklist`: the task's objectives (cached per session and task)."""
        body = {"task": task, "previous_tasks": list(previous_tasks)}
        return ChecklistReply.model_validate(await self._json(
            "POST", f"/sessions/{session_id}/checklist", idempotent=True, what="checklist", json=body))

    async def judge(
        self,
        session_id: str,
        *,
        task: str | None = None,
        agent_response: str | None = None,
        checklist: Sequence[Mapping[str, str]] | None = None,
        since_version: int | None = None,
        expects_tool_call: bool = False,
    ) -> JudgeReply:
        """`POST /sessions/{id}/judge`: verify each checklist item against the session's calls and state.

        Raises:
            GeckoJudgeError: The judge produced no verdict (never read as a success).
        """
        body: dict[str, Any] = {}
        if task is not None:
            body["task"] = task
        if agent_response is not None:
            body["agent_response"] = agent_response
        if checklist is not None:
            body["checklist"] = [dict(item) for item in checklist]
        if since_version is not None:
            body["since_version"] = since_version
        if expects_tool_call:
            body["expects_tool_call"] = True
        return JudgeReply.model_validate(await self._json(
            "POST", f"/sessions/{session_id}/judge", idempotent=True, what="judge", json=body))

    # --- compatibility endpoints ---------------------------------------------------------------------------

    async def new_session_id(self) -> str:
        """`GET /session-id`: a session with the default config."""
        body = await self._json("GET", "/session-id", idempotent=False, what="session id")
        return str(body["session_id"])

    async def set_session_state(self, session_id: str, state: Mapping[str, Any]) -> int:
        """`POST /set-session-state`; returns the new version."""
        body = await self._json("POST", "/set-session-state", idempotent=True, what="set state",
                                json={"state": dict(state)}, headers={SESSION_HEADER: session_id})
        return int(body.get("version", 0))

    async def init_session_state(
        self, session_id: str, state: Mapping[str, Any] | None = None, involved_classes: Sequence[str] | None = None
    ) -> StateReply:
        """`POST /init-session-state`: merge the toolkits' declared default states under the given state."""
        body: dict[str, Any] = {"state": dict(state or {})}
        if involved_classes is not None:
            body["involved_classes"] = list(involved_classes)
        return StateReply.model_validate(await self._json(
            "POST", "/init-session-state", idempotent=False, what="init state", json=body,
            headers={SESSION_HEADER: session_id}))

    async def get_session_state(self, session_id: str) -> StateReply:
        """`GET /get-session-state`."""
        return StateReply.model_validate(await self._json(
            "GET", "/get-session-state", idempotent=True, what="get state", headers={SESSION_HEADER: session_id}))

    async def update_state_from_real(self, session_id: str, calls: Sequence[Mapping[str, Any]]) -> StateReply:
        """`POST /update-state-from-real` with `{name, arguments, result, toolkit?}` per real call."""
        body = await self._json("POST", "/update-state-from-real", idempotent=False, what="update from real",
                                json={"tool_calls": [dict(c) for c in calls]}, headers={SESSION_HEADER: session_id})
        return StateReply(state=body.get("updated_state") or {}, version=int(body.get("version", 0)))

    # --- tools --------------------------------------------------------------------------------------------

    async def call_tool(
        self, session_id: str, toolkit: str, operation_id: str, arguments: Mapping[str, Any],
        message: str | None = None,
    ) -> ToolResponse:
        """`POST /{toolkit}/{operationId}` in a session. `message`: the id of the model message that issued the
        call (`X-Gecko-Message`), so the gating judge reads identical calls of one message as parallel calls.

        Returns:
            The response for 200 and for refusals of the call itself (422, unknown tool, 4xx).

        Raises:
            GeckoNotFoundError: The session does not exist.
            GeckoUnavailableError: Transport failure or 5xx.
        """
        path = f"/{quote(toolkit, safe='')}/{quote(operation_id, safe='')}"
        headers = {SESSION_HEADER: session_id} if message is None else {SESSION_HEADER: session_id,
                                                                        MESSAGE_HEADER: message}
        response = await self._send("POST", path, idempotent=False, json=dict(arguments), headers=headers)
        status = response.status_code
        tool_error = response.headers.get(TOOL_ERROR_HEADER) == "true"
        fault = _fault_record(response.headers.get(FAULT_HEADER))
        if status >= 500 and not tool_error and fault is None:  # an injected 5xx is the tool's answer, not Gecko failing
            _raise_for(response, f"call {toolkit}/{operation_id}")
        body: Any
        if is_success(status) and not tool_error:
            body = response.json() if response.content else None  # 204: the operation declares no content
        else:
            body = response.json() if tool_error else _problem(response)
        if tool_error:
            version = response.headers.get("X-Gecko-State-Version")
            return ToolResponse(status, body, int(version) if version and version.isdigit() else None,
                                response.headers.get("X-Gecko-Semantic"), tool_error=True, fault=fault)
        if status == 404 and str(body.get("type", "")).endswith("unknown-session"):
            raise GeckoNotFoundError(f"call {toolkit}/{operation_id}: {body.get('detail')}", status, body)
        if (status in (400, 401, 403) and fault is None
                and not str(body.get("type", "")).endswith("invalid-arguments")):
            _raise_for(response, f"call {toolkit}/{operation_id}")
        version = response.headers.get("X-Gecko-State-Version")
        return ToolResponse(status, body, int(version) if version and version.isdigit() else None,
                            response.headers.get("X-Gecko-Semantic"), fault=fault)


__all__ = ["GeckoClient", "GeckoError", "ToolResponse"]
