"""Containers of a state that one chain of changes may change in place.

States are immutable values: a change copies every container on the changed paths, so a state someone still holds
never changes under them. For a collection of thousands of records that copy is the whole cost of a call, and it
grows with the records a session created. A chain of changes where each state is read only by the next change
(one session's calls within a turn of its hold, the calls of one real-result sync) may instead change, in place,
the containers that the chain itself created: nobody outside the chain has seen them.

`Owned` is the set of those containers, held by identity (each entry keeps its container alive, so an identity is
never reused while it is owned). Whoever makes the chain decides when it ends (`clear`): from then on its last
state is an immutable value again, and may be shared (cached, read, forked). A chain whose change was not committed
must be dropped with its states, which the in-place changes may have touched.
"""

from __future__ import annotations

from typing import Any


class Owned:
    """The containers a chain of state changes created and may change in place."""

    def __init__(self) -> None:
        self._held: dict[int, Any] = {}

    def holds(self, container: Any) -> bool:
        """Whether the chain created `container` (then nobody else has seen it)."""
        return self._held.get(id(container)) is container

    def take(self, container: Any) -> None:
        """`container` is new, made by the chain."""
        self._held[id(container)] = container

    def clear(self) -> None:
        """The chain ends: every container it made is an immutable value from now on."""
        self._held.clear()
