"""Exceptions of the Gecko client, by whose fault the failure is.

```
GeckoError
├── GeckoRequestError          Gecko refused the request itself (4xx): a caller bug or a misconfiguration
│   └── GeckoNotFoundError     unknown session, toolkit or snapshot (404)
└── GeckoUnavailableError      no usable answer: transport failure after retries, or 5xx ("untested")
    └── GeckoJudgeError        the judge could not produce a verdict (502 judge-failed): "unjudged"
```

A tool call's validation errors (422) and unknown tools are not exceptions: they come back as results
the agent can read (`ToolResponse`).
"""

from __future__ import annotations

from typing import Any


class GeckoError(Exception):
    """Base of every error raised by the Gecko client.

    Attributes:
        status: HTTP status, or None for a transport failure.
        problem: the RFC 9457 problem body, when Gecko sent one.
    """

    def __init__(self, message: str, status: int | None = None, problem: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.problem = problem or {}


class GeckoRequestError(GeckoError):
    """Gecko refused the request (4xx other than a tool call's validation result)."""


class GeckoNotFoundError(GeckoRequestError):
    """The session, toolkit or snapshot does not exist (never created, deleted or expired)."""


class GeckoUnavailableError(GeckoError):
    """Gecko could not be reached or failed (5xx): work depending on it is "untested"."""


class GeckoJudgeError(GeckoUnavailableError):
    """The judge failed to produce a verdict; an attempt judged by it is "unjudged", never a success."""
