"""The one place that decides whether a failed LLM request is retried, and how long to wait.

`classify_error` turns any exception from the SDK (or the transport under it) into a
`RetryDecision`; `with_retries` runs a call under a `RetryPolicy`, sleeping through an injectable
`sleep` so tests run with zero waits, and converts the final failure into an `LLMError`.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

from utils.llm.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMContextOverflowError,
    LLMError,
    LLMInfrastructureError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
    is_context_overflow,
)

log = logging.getLogger("utils.llm")
T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
FailureKind = Literal["timeout", "connection", "rate_limit", "server", "auth", "request", "other"]


@dataclass(frozen=True)
class RetryDecision:
    """Whether to retry one failure, and what it was."""

    retry: bool
    kind: FailureKind
    message: str = ""
    retry_after: float | None = None
    """Seconds the server asked us to wait (`Retry-After`), if it said."""
    status: int | None = None

    @classmethod
    def no(cls, kind: FailureKind, message: str, status: int | None = None) -> RetryDecision:
        return cls(False, kind, message, None, status)

    @classmethod
    def transient(cls, kind: FailureKind, message: str, status: int | None = None) -> RetryDecision:
        return cls(True, kind, message, None, status)

    @classmethod
    def rate_limit(cls, retry_after: float | None, message: str) -> RetryDecision:
        return cls(True, "rate_limit", message, retry_after, 429)


class HTTPStatusFailure(Exception):
    """An HTTP error reply seen by a transport that does not use the SDK (see `transport_raw`)."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None,
                 code: str | None = None) -> None:
        self.status = status
        self.message = message
        self.headers = dict(headers or {})
        self.code = code
        super().__init__(f"HTTP {status}: {message}")

    @classmethod
    def from_body(cls, status: int, body: bytes, headers: Mapping[str, str]) -> HTTPStatusFailure:
        """Read `{"error": {"message", "code"}}` when the body has it."""
        message, code = body.decode("utf-8", "replace")[:500], None
        try:
            error = json.loads(body).get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict):
            message = str(error.get("message") or message)
            code = str(error["code"]) if error.get("code") is not None else None
        return cls(status, message, headers, code)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


def _status_decision(status: int, message: str, headers: Mapping[str, str] | None, code: str | None) -> RetryDecision:
    if status in (400, 413, 500) and is_context_overflow(f"{message} {code or ''}"):  # retrying cannot make it fit
        return RetryDecision.no("request", f"{message} ({code})" if code and code not in message else message, status)
    if status == 429:
        if code == "insufficient_quota":
            return RetryDecision.no("rate_limit", f"quota exhausted: {message}", status)
        return RetryDecision.rate_limit(parse_retry_after(headers), message)
    if status in (408, 409) or status >= 500:
        kind: FailureKind = "timeout" if status == 408 else "server"
        return RetryDecision.transient(kind, message, status)
    if status in (401, 403):
        return RetryDecision.no("auth", message, status)
    return RetryDecision.no("request", message, status)


def classify_error(exc: BaseException) -> RetryDecision:
    """Classify a failed request: retryable or not, and why."""
    if isinstance(exc, LLMInfrastructureError):
        kind: FailureKind = (
            "timeout" if isinstance(exc, LLMTimeoutError) else
            "rate_limit" if isinstance(exc, LLMRateLimitError) else
            "server" if isinstance(exc, LLMServerError) else
            "auth" if isinstance(exc, LLMAuthError) else "connection"
        )
        return RetryDecision(not isinstance(exc, LLMAuthError), kind, str(exc))
    if isinstance(exc, LLMError):
        return RetryDecision.no("request", str(exc))
    if isinstance(exc, HTTPStatusFailure):
        return _status_decision(exc.status, exc.message, exc.headers, exc.code)
    openai = sys.modules.get("openai")  # not imported yet: then `exc` cannot be one of its errors
    if openai is not None:
        if isinstance(exc, openai.APITimeoutError):
            return RetryDecision.transient("timeout", "request timed out")
        if isinstance(exc, openai.APIConnectionError):
            return RetryDecision.transient("connection", str(exc) or "connection error")
        if isinstance(exc, openai.APIStatusError):
            headers = getattr(exc.response, "headers", None)
            return _status_decision(exc.status_code, exc.message, headers, getattr(exc, "code", None))
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return RetryDecision.transient("timeout", "request timed out")
    if isinstance(exc, (ConnectionError, OSError)):
        return RetryDecision.transient("connection", str(exc) or type(exc).__name__)
    return RetryDecision.no("other", f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry transient failures."""

    max_attempts: int = 4
    """Requests in total, the first included."""
    base_delay: float = 0.5
    """Wait before the second attempt; doubles each time."""
    max_delay: float = 20.0
    max_retry_after: float = 60.0
    """Longest `Retry-After` we honour; a longer one ends the retries."""

    def delay(self, attempt: int, decision: RetryDecision, rng: random.Random) -> float | None:
        """Seconds to wait after failed attempt number `attempt` (1-based); None to give up."""
        if not decision.retry or attempt >= self.max_attempts:
            return None
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        jittered = backoff / 2 + rng.uniform(0, backoff / 2)
        if decision.retry_after is not None:
            if decision.retry_after > self.max_retry_after:
                return None
            return max(decision.retry_after, jittered)
        return jittered


_ERRORS: dict[FailureKind, type[LLMInfrastructureError]] = {
    "timeout": LLMTimeoutError, "connection": LLMConnectionError, "rate_limit": LLMRateLimitError,
    "server": LLMServerError, "auth": LLMAuthError,
}


def to_llm_error(exc: BaseException, decision: RetryDecision, attempts: int) -> LLMError:
    """The `LLMError` to raise for a failure we stopped retrying."""
    if isinstance(exc, LLMInfrastructureError):
        exc.attempts = attempts
    if isinstance(exc, LLMError):
        return exc
    if decision.kind in ("request", "other"):
        if decision.kind == "request" and is_context_overflow(decision.message or str(exc)):
            return LLMContextOverflowError(decision.message or str(exc), decision.status)
        return LLMRequestError(decision.message or str(exc), decision.status)
    suffix = f" (after {attempts} attempt{'s' if attempts != 1 else ''})"
    return _ERRORS[decision.kind](f"{decision.kind}: {decision.message}{suffix}", attempts)


async def with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
    on_retry: Callable[[int, RetryDecision, float], None] | None = None,
    deadline: float | None = None,
) -> tuple[T, int]:
    """Run `call` until it succeeds or the policy gives up.

    Args:
        call: makes one request.
        policy: attempts and back-off.
        sleep: awaited between attempts (inject a no-op in tests).
        rng: jitter source (seeded in tests).
        on_retry: told (attempt, decision, delay) before each wait.
        deadline: `time.monotonic()` after which no further attempt starts (a retry whose back-off would
            end past it is not made): the total time of the call, whatever the policy allows.

    Returns:
        (result, number of attempts made).

    Raises:
        LLMInfrastructureError: a transient failure that outlived the retries (or a non-retryable 401/403).
        LLMRequestError: the provider rejected the request.
    """
    rng = rng or random.Random()
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call(), attempt
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # classified below; nothing is swallowed
            decision = classify_error(exc)
            delay = policy.delay(attempt, decision, rng)
            if delay is not None and deadline is not None and time.monotonic() + delay >= deadline:
                delay = None
            if delay is None:
                error = to_llm_error(exc, decision, attempt)
                if isinstance(error, LLMInfrastructureError):
                    log.warning("LLM request failed for good after %d attempt(s): %s", attempt, error)
                raise error from exc
            log.warning("LLM request failed (%s: %s); retry %d in %.1f s", decision.kind, decision.message[:200],
                        attempt, delay)
            if on_retry is not None:
                on_retry(attempt, decision, delay)
            await sleep(delay)
