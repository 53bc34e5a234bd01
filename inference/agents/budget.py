"""What one attempt of an LLM agent may spend of its model's context window (when the endpoint says how large it
is: llama.cpp's `/props`, `utils.llm.ModelSpec.context_tokens`).

```
ContextBudget(context_tokens, reply_tokens)
  .max_calls        calls per attempt: one call with its result takes ~TOKENS_PER_CALL tokens of the transcript
  .feedback_chars   the retry feedback: at most a quarter of the window
  .fits(messages)   whether the next request (messages + tools + the reply's cap) still fits
```

Sizes are estimated from characters (`CHARS_PER_TOKEN`, low for JSON-heavy text, so the estimate errs on the side of
stopping early); the server's own refusal (`AgentContextFullError`) catches what the estimate lets through.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 3
TOKENS_PER_CALL = 256
"""Transcript tokens one call costs with its result (arguments and results are cut to a few hundred characters)."""
FEEDBACK_SHARE = 4
"""The retry feedback gets at most 1/FEEDBACK_SHARE of the window."""
MIN_CALLS = 4


@dataclass(frozen=True)
class ContextBudget:
    """The limits of one attempt on a model with a known context window."""

    context_tokens: int
    reply_tokens: int = 0
    """The reply's output cap: room kept free in every request."""

    @property
    def max_calls(self) -> int:
        """Most tool calls one attempt may make (at least `MIN_CALLS`)."""
        return max(MIN_CALLS, self.context_tokens // TOKENS_PER_CALL)

    @property
    def feedback_chars(self) -> int:
        """Most characters of calls in the retry feedback."""
        return self.context_tokens * CHARS_PER_TOKEN // FEEDBACK_SHARE

    def estimate(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()) -> int:
        """Estimated prompt tokens of a request."""
        text = json.dumps(list(messages), ensure_ascii=False, default=str) + json.dumps(list(tools), default=str)
        return len(text) // CHARS_PER_TOKEN

    def fits(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()) -> bool:
        """Whether a request with `messages` and `tools`, and room for the reply, fits the window."""
        return self.estimate(messages, tools) + self.reply_tokens <= self.context_tokens
