"""`ScriptedTransport`: a `ChatTransport` that plays canned replies, for unit tests without a socket.

Each step is reply text, a `RawReply`, an exception to raise, or a function of the request. The
transport records every request (body and headers), and fails loudly on a request beyond the script; `assert_done`
fails if steps were left unused.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Union

from utils.llm.aliases import ModelSpec
from utils.llm.transport import RawReply

Step = Union[str, RawReply, BaseException, Callable[[dict[str, Any]], Union[str, RawReply]]]


class ScriptExhausted(AssertionError):
    """A request arrived after the last scripted step."""


class ScriptedTransport:
    """Replays `steps` in order, one per request."""

    def __init__(self, steps: Iterable[Step] = ()) -> None:
        self._steps: deque[Step] = deque(steps)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        """The extra HTTP headers of each request, in order."""

    def add(self, *steps: Step) -> None:
        """Append steps."""
        self._steps.extend(steps)

    async def complete(self, spec: ModelSpec, api_key: str, request: dict[str, Any], timeout: float,
                       headers: Mapping[str, str] | None = None) -> RawReply:
        self.requests.append(request)
        self.headers.append(dict(headers or {}))
        if not self._steps:
            raise ScriptExhausted(f"unexpected request #{len(self.requests)} to {spec.name}: the script is used up")
        step = self._steps.popleft()
        if callable(step) and not isinstance(step, BaseException):
            step = step(request)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, RawReply):
            return step
        text = str(step)
        prompt = sum(len(str(m.get("content") or "")) for m in request.get("messages", []))
        return RawReply(text=text, input_tokens=prompt // 4 + 1, output_tokens=len(text) // 4 + 1,
                        finish_reason="stop", model=spec.model)

    def assert_done(self) -> None:
        """Fail if scripted steps were not consumed."""
        if self._steps:
            raise AssertionError(f"{len(self._steps)} scripted step(s) were never requested")

    async def aclose(self) -> None:
        return None
