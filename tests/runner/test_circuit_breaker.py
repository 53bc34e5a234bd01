"""The circuit breaker stops a run when the infrastructure looks down; a task ruled out by the run's configuration
(`TaskOutcome.outage=False`: a backend without its key) is no outage, so it neither counts nor resets the count."""

from __future__ import annotations

from benchmarks.runner import TaskOutcome
from benchmarks.runner.progress import CircuitBreaker

DOWN = TaskOutcome("untested", reason="Gecko: connection refused")
NO_KEY = TaskOutcome("untested", reason="SERPAPI_API_KEY is not set", outage=False)
DONE = TaskOutcome("done", score=1.0)


def test_untested_for_want_of_a_key_never_trips_the_breaker() -> None:
    breaker = CircuitBreaker(3)
    for _ in range(50):
        breaker.observe(NO_KEY)
    assert not breaker.tripped and breaker.streak == 0


def test_outages_around_configuration_untested_tasks_still_add_up() -> None:
    breaker = CircuitBreaker(3)
    for outcome in (DOWN, NO_KEY, DOWN, NO_KEY, NO_KEY):
        breaker.observe(outcome)
    assert not breaker.tripped and breaker.streak == 2
    breaker.observe(DOWN)
    assert breaker.tripped and "connection refused" in (breaker.reason or "")
    breaker = CircuitBreaker(3)
    for outcome in (DOWN, DOWN, DONE, DOWN):
        breaker.observe(outcome)
    assert not breaker.tripped and breaker.streak == 1
