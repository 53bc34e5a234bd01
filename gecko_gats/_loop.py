"""An event loop on a daemon thread, so that synchronous code can use Gecko's async clients.

The sync client and the simulator run every coroutine here: a caller with no loop blocks on the result
(`run`); a caller inside a loop of its own (an async test, an agent framework) awaits it without blocking that loop
(`run_async`). One loop per object, closed with it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """A private event loop running on its own daemon thread until `close`."""

    def __init__(self, name: str = "gecko-loop") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop (for objects that must be created on it)."""
        return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for its result (from any thread but the loop's own).

        Raises:
            RuntimeError: Called from the loop's own thread (it would wait for itself) or after `close`.
        """
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a synchronous Gecko call from inside its own loop; use the a-prefixed method")
        if self._loop.is_closed():
            coro.close()
            raise RuntimeError("this Gecko client or simulator is closed")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the loop and await its result from another loop (the caller's loop is not blocked)."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    def close(self) -> None:
        """Stop the loop and its thread (idempotent)."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
