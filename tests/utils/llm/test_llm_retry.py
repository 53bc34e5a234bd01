"""Retry classification and back-off: one place, zero real waits."""

from __future__ import annotations

import random

import httpx2
import openai
import pytest

from utils.llm import (
    LLMAuthError,
    LLMConnectionError,
    LLMInfrastructureError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
    RetryPolicy,
    classify_error,
    with_retries,
)
from utils.llm.retry import HTTPStatusFailure, RetryDecision, parse_retry_after

REQUEST = httpx2.Request("POST", "http://test/v1/chat/completions")


def status_error(status: int, headers: dict[str, str] | None = None, body: object = None) -> openai.APIStatusError:
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    return openai.APIStatusError(f"status {status}", response=response, body=body)


@pytest.mark.parametrize(
    ("exc", "retry", "kind"),
    [
        (openai.APITimeoutError(request=REQUEST), True, "timeout"),
        (openai.APIConnectionError(request=REQUEST), True, "connection"),
        (status_error(429), True, "rate_limit"),
        (status_error(500), True, "server"),
        (status_error(503), True, "server"),
        (status_error(408), True, "timeout"),
        (status_error(401), False, "auth"),
        (status_error(403), False, "auth"),
        (status_error(400), False, "request"),
        (status_error(404), False, "request"),
        (TimeoutError(), True, "timeout"),
        (ConnectionResetError("reset"), True, "connection"),
        (ValueError("bug"), False, "other"),
    ],
)
def test_classification(exc: BaseException, retry: bool, kind: str) -> None:
    decision = classify_error(exc)
    assert (decision.retry, decision.kind) == (retry, kind)


def test_429_reads_retry_after_seconds_and_ms() -> None:
    assert classify_error(status_error(429, {"Retry-After": "7"})).retry_after == 7.0
    assert classify_error(status_error(429, {"retry-after-ms": "1500"})).retry_after == 1.5
    assert classify_error(status_error(429)).retry_after is None


def test_retry_after_http_date() -> None:
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None


def test_insufficient_quota_is_not_retried() -> None:
    exc = status_error(429, body={"code": "insufficient_quota", "message": "no credit"})
    assert not classify_error(exc).retry


def test_backoff_grows_exponentially_with_jitter_and_caps() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1.0, max_delay=8.0)
    rng = random.Random(1)
    transient = RetryDecision.transient("server", "x")
    delays = [policy.delay(n, transient, rng) for n in range(1, 7)]
    for n, delay in enumerate(delays, start=1):
        full = min(8.0, 2 ** (n - 1))
        assert full / 2 <= delay <= full
    assert policy.delay(10, transient, rng) is None
    assert policy.delay(1, RetryDecision.no("request", "x"), rng) is None


def test_retry_after_is_honoured_and_capped() -> None:
    policy = RetryPolicy(base_delay=0.1, max_retry_after=30)
    rng = random.Random(0)
    assert policy.delay(1, RetryDecision.rate_limit(12.0, "x"), rng) == 12.0
    assert policy.delay(1, RetryDecision.rate_limit(120.0, "x"), rng) is None


class Flaky:
    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


async def test_with_retries_recovers_and_reports_attempts(caplog: pytest.LogCaptureFixture) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    call = Flaky([status_error(500), status_error(429, {"Retry-After": "3"})])
    result, attempts = await with_retries(call, RetryPolicy(base_delay=0.5), sleep=sleep, rng=random.Random(0))
    assert (result, attempts, call.calls) == ("ok", 3, 3)
    assert len(waits) == 2 and 0.25 <= waits[0] <= 0.5 and waits[1] == 3.0
    retries = [r.getMessage() for r in caplog.records if r.name == "utils.llm"]  # what run.log gets
    assert len(retries) == 2 and "(server:" in retries[0] and "retry 2 in 3.0 s" in retries[1]


@pytest.mark.parametrize(
    ("failure", "error"),
    [
        (status_error(500), LLMServerError),
        (status_error(429), LLMRateLimitError),
        (openai.APITimeoutError(request=REQUEST), LLMTimeoutError),
        (openai.APIConnectionError(request=REQUEST), LLMConnectionError),
    ],
)
async def test_exhausted_retries_raise_typed_infrastructure_errors(failure: BaseException, error: type) -> None:
    async def sleep(seconds: float) -> None:
        return None

    call = Flaky([failure] * 10)
    with pytest.raises(error) as info:
        await with_retries(call, RetryPolicy(max_attempts=3), sleep=sleep)
    assert isinstance(info.value, LLMInfrastructureError)
    assert call.calls == 3 and info.value.attempts == 3


async def test_non_retryable_errors_fail_at_once() -> None:
    async def sleep(seconds: float) -> None:
        raise AssertionError("must not wait")

    auth = Flaky([status_error(401)])
    with pytest.raises(LLMAuthError):
        await with_retries(auth, RetryPolicy(), sleep=sleep)
    bad = Flaky([status_error(400)])
    with pytest.raises(LLMRequestError):
        await with_retries(bad, RetryPolicy(), sleep=sleep)
    assert auth.calls == 1 and bad.calls == 1


def test_raw_transport_failures_share_the_same_classification() -> None:
    limited = HTTPStatusFailure.from_body(429, b'{"error": {"message": "slow down", "code": "rate_limit"}}',
                                          {"Retry-After": "4"})
    assert classify_error(limited) == RetryDecision.rate_limit(4.0, "slow down")
    quota = HTTPStatusFailure.from_body(429, b'{"error": {"message": "pay", "code": "insufficient_quota"}}', {})
    assert not classify_error(quota).retry
    assert classify_error(HTTPStatusFailure.from_body(502, b"<html>bad gateway</html>", {})).kind == "server"
    assert classify_error(HTTPStatusFailure(401, "no")).kind == "auth"
