"""RFC 9457 problem details: every error the server returns has this shape (`application/problem+json`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException

from gecko.api.responses import FastJSONResponse

PROBLEM_MEDIA_TYPE = "application/problem+json"


class ProblemError(HTTPException):
    """Raised anywhere in request handling; rendered as `application/problem+json`.

    An `HTTPException`, so that FastAPI lets it through from request-body parsing (`gecko.api.deps`).
    """

    def __init__(self, status: int, title: str, detail: str, kind: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(status, detail, headers)
        self.status = status
        self.title = title
        self.kind = kind
        self.extra = extra

    def response(self) -> FastJSONResponse:
        return problem_response(self.status, self.title, self.detail, self.kind, self.headers, **self.extra)


class ProblemItem(BaseModel):
    """One violation: where (RFC 6901 pointer), which rule, and a sentence."""

    pointer: str
    keyword: str
    message: str
    source: str | None = None
    """`syntactic` or `semantic` for the arguments of a tool call."""


class Problem(BaseModel):
    """An error (RFC 9457): `type` is `urn:gecko:problem:<kind>`; some problems add fields (`errors`, `tool`, …)."""

    model_config = ConfigDict(extra="allow")
    type: str
    title: str
    status: int
    detail: str
    errors: list[ProblemItem] | None = None
    """Every violation, for 422s about a request's content."""


def problem_response(status: int, title: str, detail: str, kind: str, headers: Mapping[str, str] | None = None,
                     **extra: Any) -> FastJSONResponse:
    body = {"type": f"urn:gecko:problem:{kind}", "title": title, "status": status, "detail": detail, **extra}
    return FastJSONResponse(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


def bad_request(detail: str, kind: str = "bad-request", **extra: Any) -> ProblemError:
    return ProblemError(400, "Bad request", detail, kind, **extra)


def not_found(detail: str, kind: str = "not-found", **extra: Any) -> ProblemError:
    return ProblemError(404, "Not found", detail, kind, **extra)
