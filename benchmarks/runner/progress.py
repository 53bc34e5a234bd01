"""What the user sees while a run goes: one progress bar with the running score, and `--verbose` lines."""

from __future__ import annotations

from tqdm import tqdm

from benchmarks.runner.protocol import TaskOutcome, WorkItem


class Progress:
    """The progress bar of one run (a no-op when disabled); owned by the run's event loop.

    Args:
        label: The bar's title (the benchmark's name).
        total: Tasks to run.
        enabled: Show the bar (`--no-progress` turns it off).
        verbose: Print one line per finished task.
    """

    def __init__(self, label: str, total: int, *, enabled: bool, verbose: bool) -> None:
        self.verbose = verbose
        self.bar = tqdm(total=total, desc=label, unit="task", dynamic_ncols=True, disable=not enabled or not total)
        self.scored = 0
        self.score_sum = 0.0
        self.done = 0
        self.failed = 0
        """Untested and errored tasks."""

    def update(self, item: WorkItem, outcome: TaskOutcome) -> None:
        """Count one finished task, refresh the bar, print its line if verbose."""
        if outcome.status == "done":
            self.done += 1
        else:
            self.failed += 1
        if outcome.score is not None:
            self.scored += 1
            self.score_sum += outcome.score
        if self.verbose:
            self.write(_line(item, outcome))
        postfix = {"score": f"{self.score_sum / self.scored:.3f}" if self.scored else "-", "done": str(self.done)}
        if self.failed:
            postfix["untested/errored"] = str(self.failed)
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)

    def write(self, message: str) -> None:
        """Print a line without breaking the bar."""
        if self.bar.disable:
            print(message, flush=True)
        else:
            self.bar.write(message)

    def close(self) -> None:
        """Remove the bar."""
        self.bar.close()


def _line(item: WorkItem, outcome: TaskOutcome) -> str:
    text = f"{item.key}: {outcome.status}"
    if outcome.score is not None:
        text += f", score {outcome.score:g}"
    if outcome.note:
        text += f", {outcome.note}"
    if outcome.reason:
        text += f" ({outcome.reason})"
    return text


class CircuitBreaker:
    """Stops a run when the infrastructure looks down: `limit` untested tasks in a row (0: never).

    A done or errored task resets the count (errors are bugs, not outages).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.streak = 0
        self.reason: str | None = None
        """Why the run was stopped; None while it goes on."""

    def observe(self, outcome: TaskOutcome) -> None:
        """Count one finished task; trips the breaker at the limit. An untested task that is no outage (see
        `TaskOutcome.outage`) neither counts nor resets the count."""
        if outcome.status == "untested" and not outcome.outage:
            return
        self.streak = self.streak + 1 if outcome.status == "untested" else 0
        if self.limit and self.streak >= self.limit and self.reason is None:
            self.reason = (f"{self.streak} tasks in a row were untested (last: {outcome.reason}); "
                           "the infrastructure looks down, so no new task was started")

    @property
    def tripped(self) -> bool:
        """Whether the run must stop taking new tasks."""
        return self.reason is not None
