"""Strings that match a regular expression, the same ones in every process (the generator's `pattern` values).

rstr makes them, with a random generator seeded from the pattern. Its negated classes (`[^:/\\s]`) pick from a
list made of a set of characters, and a set's order changes with each process's string hashing. The same pattern
gave other strings in each worker and each run: a response generated twice for the same call differed. `_Xeger`
picks from the printable characters in their own order instead.
"""

from __future__ import annotations

import random
import string
from itertools import chain
from typing import Any

import rstr


class _Xeger(rstr.Rstr):
    """rstr's generator with its negated character classes in a fixed order."""

    def _handle_in(self, value: Any) -> Any:
        candidates = list(chain(*(self._handle_state(i) for i in value)))
        if candidates and candidates[0] is False:
            excluded = set(candidates[1:])
            candidates = [c for c in string.printable if c not in excluded]
        return self._random.choice(candidates)


def pattern_samples(pattern: str, count: int) -> list[str]:
    """Up to `count` strings matching `pattern`, equal for equal patterns in any process; fewer (none) when rstr
    cannot follow the pattern's syntax."""
    generator = _Xeger(random.Random(pattern))
    samples: list[str] = []
    for _ in range(count):
        try:
            samples.append(generator.xeger(pattern))
        except Exception:  # noqa: BLE001 - rstr raises assorted errors on unsupported syntax
            break
    return samples
