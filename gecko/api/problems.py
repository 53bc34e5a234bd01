"""RFC 9457 problem details: every error the server returns has this shape."""

from __future__ import annotations

from typing import Any

from gecko.api.responses import FastJSONResponse

PROBLEM_MEDIA_TYPE = "application/problem+json"


class ProblemError(Exception):
    """Raised anywhere in request handling; rendered as `application/problem+json`."""

    def __init__(self, status: int, title: str, detail: str, kind: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
        self.detail = detail
        self.kind = kind
        self.headers = headers or {}
        self.extra = extra

    def response(self) -> FastJSONResponse:
        return problem_response(self.status, self.title, self.detail, self.kind, self.headers, **self.extra)


def problem_response(status: int, title: str, detail: str, kind: str, headers: dict[str, str] | None = None,
                     **extra: Any) -> FastJSONResponse:
    body = {"type": f"urn:gecko:problem:{kind}", "title": title, "status": status, "detail": detail, **extra}
    return FastJSONResponse(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


def bad_request(detail: str, kind: str = "bad-request", **extra: Any) -> ProblemError:
    return ProblemError(400, "Bad request", detail, kind, **extra)


def not_found(detail: str, kind: str = "not-found", **extra: Any) -> ProblemError:
    return ProblemError(404, "Not found", detail, kind, **extra)
