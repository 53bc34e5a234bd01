"""Robustness metric definitions on hand-made traces whose answers are worked out by hand."""

from __future__ import annotations

from utils.faults.metrics import RobustnessCounts, TraceCall, count_episode, count_episodes, side_counts

LIMITED = {"rule": "r", "kind": "rate_limit", "level": "tool", "call": 1}
SLOW = {"rule": "s", "kind": "delay", "level": "state", "call": 1}


def ok(tool: str = "a", args: dict | None = None, fault: dict | None = None) -> TraceCall:
    return TraceCall(tool, args or {}, True, fault)


def failed(tool: str = "a", args: dict | None = None, fault: dict | None = None, compliant: bool = True) -> TraceCall:
    return TraceCall(tool, args or {}, False, fault, compliant)


def test_retry_after_an_injected_error_recovers_but_is_not_flexible() -> None:
    # a 429, the same call again succeeds, then one more call
    counts = count_episode([failed(fault=LIMITED), ok(), ok("b")])
    assert (counts.failed, counts.recovered, counts.injected_errors, counts.injected_recovered) == (1, 1, 1, 1)
    assert counts.flexible == 0 and counts.faulted_episodes == 1 and counts.gave_up == 0
    assert counts.rates() == {"recovery_rate": 1.0, "recovery_rate_injected": 1.0, "flexibility": 0.0,
                              "schema_compliance": 1.0, "give_up_rate": 0.0}


def test_another_way_after_an_injected_error_is_flexible() -> None:
    # injected error → a different tool (ok) ; injected error → same tool other arguments (fails) → last call
    counts = count_episode([failed(fault=LIMITED), ok("b"), failed("c", fault=LIMITED), failed("c", {"x": 1})])
    assert counts.injected_errors == 2 and counts.flexible == 2
    assert counts.injected_recovered == 1  # only the first was followed by a success
    assert counts.failed == 3 and counts.recovered == 1  # the last failed call has no next call
    assert counts.gave_up == 1  # no success after the last injected error
    assert counts.rates()["recovery_rate"] == round(1 / 3, 6)


def test_non_blocking_injections_and_real_failures() -> None:
    # a delayed success is an injection but not an error; a real (not injected) failure counts only for recovery
    counts = count_episode([ok(fault=SLOW), failed(compliant=False), ok()])
    assert counts.injected == 1 and counts.injected_errors == 0 and counts.by_kind == {"delay": 1}
    assert counts.failed == 1 and counts.recovered == 1 and counts.compliant == 2
    rates = counts.rates()
    assert rates["flexibility"] is None and rates["give_up_rate"] is None  # nothing to count: None, not 0 or 1
    assert rates["schema_compliance"] == round(2 / 3, 6)


def test_counts_add_up_over_episodes_and_round_trip() -> None:
    episodes = [[failed(fault=LIMITED), ok()], [failed(fault=LIMITED)], []]
    total = count_episodes(episodes)
    assert (total.episodes, total.calls, total.faulted_episodes, total.gave_up) == (3, 3, 2, 1)
    assert total.rates()["give_up_rate"] == 0.5 and total.rates()["recovery_rate_injected"] == 0.5
    assert RobustnessCounts.from_public(total.public()).public() == total.public()
    sides = side_counts({"simulated": episodes[:1], "real": episodes[1:]})
    assert sides["simulated"]["calls"] == 2 and sides["real"]["calls"] == 1 and sides["all"]["calls"] == 3
