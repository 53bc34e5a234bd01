"""Errors of real upstreams (hybrid and passthrough sessions)."""

from __future__ import annotations


class UpstreamError(Exception):
    """The real service could not answer (did not start, crashed, timed out, refused the connection).

    Never turned into a simulated answer: the caller sees it (HTTP 502, an MCP error result marked retryable).
    """


class NoUpstream(LookupError):
    """A passthrough call to a toolkit that declares no `x-gecko-upstream`."""


class UpstreamNotAllowed(NoUpstream):
    """A hybrid or passthrough call to a toolkit whose `x-gecko-upstream` the operator did not allow
    (`--allow-upstream`): a toolkit file and a client's session mode never start an upstream on their own."""


def root_cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio task groups wrap a transport's failure), else `exc`."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
