"""Logging of the server: text (the default) or one JSON object per line (`--log-format json`), with the id of the
request being served on every record logged while serving it."""

from __future__ import annotations

import json
import logging
import time
from contextvars import ContextVar
from typing import Literal

LogFormat = Literal["text", "json"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_REQUEST_ID: ContextVar[str | None] = ContextVar("gecko_request_id", default=None)
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime",
                                                                                  "request_id"}


def current_request_id() -> str | None:
    """The id of the request this task serves (None outside a request)."""
    return _REQUEST_ID.get()


def set_request_id(request_id: str | None) -> object:
    """Make `request_id` the current one; returns the token `reset_request_id` takes."""
    return _REQUEST_ID.set(request_id)


def reset_request_id(token: object) -> None:
    """Restore the request id that was current before `set_request_id`."""
    _REQUEST_ID.reset(token)  # type: ignore[arg-type]  # the token set_request_id returned


class RequestIdFilter(logging.Filter):
    """Adds `request_id` (or None) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time (ISO 8601, UTC), level, logger, message, request id, pid, the extras given
    with `extra=` and the traceback, if any."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        request_id = getattr(record, "request_id", None)
        if request_id is not None:
            out["request_id"] = request_id
        out.update({key: value for key, value in record.__dict__.items() if key not in _STANDARD})
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def configure_logging(level: str, log_format: LogFormat = "text") -> None:
    """Configure the process's logging for `level` and `log_format` (a server process's first step).

    `text` is `logging.basicConfig` with Gecko's line format (a no-op where logging is configured already, as under
    pytest). `json` adds one handler writing JSON objects to stderr (once per process) and routes uvicorn's
    loggers, which have text handlers of their own, through it.

    Args:
        level: a `logging` level name; `trace` is DEBUG.
        log_format: `text` (human lines) or `json` (one object per line).
    """
    numeric = logging.DEBUG if level.lower() == "trace" else getattr(logging, level.upper())
    if log_format == "text":
        logging.basicConfig(level=numeric, format=TEXT_FORMAT)
        return
    root = logging.getLogger()
    root.setLevel(numeric)
    if not any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.addFilter(RequestIdFilter())
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
