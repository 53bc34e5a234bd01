"""The decisions of Algorithm 1, as pure functions: attempt status, when to stop, the best attempt, the
turn's status.

Best attempt (among attempts that ran, i.e. not `error`): the highest judge score (the fraction of
objectives met; 0 without a verdict, so an `unjudged` attempt earns no credit, and 0 when a failed call
never reached Gecko, since the judge could not see it), then the fewest failed calls of the agent's own
(validation errors, unknown tools, malformed arguments), then the latest. A success always wins
(score 1.0), and the loop stops at the first one, so it is also the last attempt.

Under a fault policy, calls an injected fault failed (429, 503, time-outs …) are not the agent's failed calls:
an attempt is not ranked below another because it met more injected faults (luck), only by what the judge found
and by its own errors. Forks inherit the turn-start session's policy and count, so every attempt meets the same
faults at the same call numbers. Where what the agent did about a fault matters, the judge sees it (the rules
judge fails an attempt with an injected error that no later identical call got through). With judging off, an
attempt stops the turn only when it has no failed call of its own and no unrecovered injected error.
"""

from __future__ import annotations

from collections.abc import Sequence

from gats.model import INFRASTRUCTURE_STATUSES, AttemptRecord, AttemptStatus, TurnStatus, Verdict
from inference.tools.execution import CallRecord


def attempt_status(
    *, ran: bool, judged: bool, verdict: Verdict | None, calls: Sequence[CallRecord]
) -> AttemptStatus:
    """The status of an attempt.

    Args:
        ran: The agent run completed (no infrastructure failure or refused request).
        judged: Judging was on for this attempt.
        verdict: The judge's verdict; None when the judge failed or judging was off.
        calls: The attempt's calls. A call that never reached Gecko (unknown tool, malformed arguments)
            is invisible to the judge, so it makes the attempt `failed` whatever the verdict.
    """
    if not ran:
        return "error"
    if not judged:
        return "skipped"
    if verdict is None:
        return "unjudged"
    if any(not call.outcome.reached_backend for call in calls):
        return "failed"
    return "success" if verdict.success else "failed"


def should_stop(attempt: AttemptRecord) -> bool:
    """Stop after a success; with judging off, after an attempt with no failed call of its own and no injected
    error left unrecovered."""
    if attempt.status == "success":
        return True
    return attempt.status == "skipped" and attempt.validation_errors == 0 and attempt.unrecovered_faults == 0


def best_attempt(attempts: Sequence[AttemptRecord]) -> int | None:
    """Index of the best attempt (see the module docstring), or None when every attempt is `error`."""
    candidates = [a for a in attempts if a.status != "error"]
    if not candidates:
        return None
    best = max(candidates, key=lambda a: (a.status == "success", a.score, -a.validation_errors, a.index))
    return best.index


def turn_status(attempts: Sequence[AttemptRecord], best: int | None) -> TurnStatus:
    """`untested` when any attempt failed for infrastructure reasons (it did not run, or the judge gave no
    verdict): GATS did not run as configured, so its result would not be the method's; else the best attempt's
    status."""
    if best is None or any(a.status in INFRASTRUCTURE_STATUSES for a in attempts):
        return "untested"
    status = attempts[best].status
    if status == "unjudged" or status == "error":  # excluded above; spelled out so the type narrows
        raise AssertionError(f"attempt {best} has status {status!r}")
    return status
