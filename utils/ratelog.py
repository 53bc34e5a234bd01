"""A log line at most once per interval, with the count of the ones left out (a failing disk must not log per request)."""

from __future__ import annotations

import time


class EveryInterval:
    """`due()` is the number of events since the last line when one may be logged now, else None."""

    def __init__(self, seconds: float = 60.0) -> None:
        self._seconds = seconds
        self._last = float("-inf")
        self._skipped = 0

    def due(self) -> int | None:
        """Count one event; the events left out since the last line (0 or more) when a line is due, else None."""
        now = time.monotonic()
        if now - self._last < self._seconds:
            self._skipped += 1
            return None
        skipped, self._last, self._skipped = self._skipped, now, 0
        return skipped
