"""Exceptions of the LLM layer, grouped by whose fault the failure is.

```
LLMError
├── LLMUsageError              the caller asked for something impossible (bad input; never retried)
│   ├── UnknownModelError      a model name that is not in the alias table
│   ├── MissingAPIKeyError     the model's key variable is not set
│   └── LLMRequestError        the provider refused the request as malformed (400, 404, 422)
│       └── LLMContextOverflowError  the prompt does not fit the model's context (the caller's prompt, not the service)
├── LLMOutputError             the model answered, but the answer is unusable (bad output)
│   ├── LLMParseError          no JSON could be read from the reply
│   └── LLMSchemaError         JSON that still violates the schema after the repair round
└── LLMInfrastructureError     the service could not answer (retryable; after retries: "untested")
    ├── LLMTimeoutError        the request timed out
    ├── LLMConnectionError     no connection, reset, DNS …
    ├── LLMRateLimitError      429 after every retry
    ├── LLMServerError         5xx after every retry
    └── LLMAuthError           401/403: the run cannot proceed; rerun once fixed
```

Callers that grade work (judges, benchmark runners) treat `LLMInfrastructureError` as "untested",
never as a failure of the agent under test, and never as a success.
"""

from __future__ import annotations

from collections.abc import Sequence


class LLMError(Exception):
    """Base of every error raised by `utils.llm`."""


class LLMUsageError(LLMError):
    """The caller's fault: a bad model name, a missing key, a malformed request."""


class UnknownModelError(LLMUsageError):
    """A model name that is neither an alias, an engine name, nor the generic form."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = list(known)
        super().__init__(
            f"unknown model {name!r}; known names: {', '.join(self.known)}; "
            "or use 'openai-compatible:<model>@<base_url>' for any OpenAI-compatible server"
        )


class MissingAPIKeyError(LLMUsageError):
    """The provider needs a key and its environment variable is empty."""

    def __init__(self, model: str, variable: str) -> None:
        self.model = model
        self.variable = variable
        super().__init__(f"model {model!r} needs an API key: set {variable} (in the environment or .env)")


class LLMRequestError(LLMUsageError):
    """The provider rejected the request itself (HTTP 400/404/422); retrying would not help."""

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class LLMContextOverflowError(LLMRequestError):
    """The prompt (with room for the reply) does not fit the model's context window (llama.cpp's
    `exceed_context_size_error`, OpenAI's `context_length_exceeded`): the caller made the prompt too long, so the work
    that made it is judged on what it did (an agent's attempt ends there), never counted as infrastructure."""


_OVERFLOW_MARKERS = ("exceed_context_size", "exceeds the available context size", "context_length_exceeded",
                     "maximum context length", "context window")


def is_context_overflow(message: str) -> bool:
    """Whether a provider's error message says the prompt does not fit the model's context."""
    lowered = message.lower()
    return any(marker in lowered for marker in _OVERFLOW_MARKERS)


class LLMOutputError(LLMError):
    """The model answered, but not with something usable."""

    def __init__(self, message: str, raw: str = "", errors: Sequence[str] = ()) -> None:
        self.raw = raw
        self.errors = list(errors)
        super().__init__(message)


class LLMParseError(LLMOutputError):
    """No JSON value could be read from the reply."""


class LLMSchemaError(LLMOutputError):
    """The reply is JSON but does not fit the requested schema, even after the repair round."""


class LLMInfrastructureError(LLMError):
    """The service could not produce an answer; work depending on it is "untested".

    Attributes:
        attempts: how many requests were made before giving up.
    """

    def __init__(self, message: str, attempts: int = 1) -> None:
        self.attempts = attempts
        super().__init__(message)


class LLMTimeoutError(LLMInfrastructureError):
    """The request did not finish within the timeout."""


class LLMConnectionError(LLMInfrastructureError):
    """The service could not be reached."""


class LLMRateLimitError(LLMInfrastructureError):
    """HTTP 429 on every attempt."""


class LLMServerError(LLMInfrastructureError):
    """HTTP 5xx on every attempt."""


class LLMAuthError(LLMInfrastructureError):
    """HTTP 401/403: wrong or missing key, or no access to the model. Not retried."""
