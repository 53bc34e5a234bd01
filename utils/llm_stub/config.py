"""Configuration of the stub server: latency, fault rates, seed, scripted plans."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FAULT_KINDS: tuple[str, ...] = ("timeout", "rate_limit", "server_error", "malformed", "schema_violation")


@dataclass(frozen=True)
class FaultRates:
    """Probability of each fault per request (they must sum to at most 1)."""

    timeout: float = 0.0
    """Hold the request for `StubConfig.hang_s` seconds, then answer 504 (clients time out first)."""
    rate_limit: float = 0.0
    """429 with a `Retry-After` header."""
    server_error: float = 0.0
    """500 with an OpenAI-style error body."""
    malformed: float = 0.0
    """200 whose JSON content (or tool-call arguments) is cut short."""
    schema_violation: float = 0.0
    """200 with valid JSON that violates the requested schema."""

    def __post_init__(self) -> None:
        for kind in FAULT_KINDS:
            value = getattr(self, kind)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"fault rate {kind}={value} must be within [0, 1]")
        if self.total() > 1.0 + 1e-9:
            raise ValueError(f"fault rates sum to {self.total():.3f}; at most 1 is possible")

    def total(self) -> float:
        return sum(getattr(self, kind) for kind in FAULT_KINDS)

    @classmethod
    def uniform(cls, rate: float) -> FaultRates:
        """`rate` split evenly over the five kinds."""
        share = rate / len(FAULT_KINDS)
        return cls(**{kind: share for kind in FAULT_KINDS})


@dataclass(frozen=True)
class StubConfig:
    """How the stub answers."""

    latency_ms: tuple[float, float] = (0.0, 0.0)
    """Added latency per request, uniform in [low, high] milliseconds (equal bounds: fixed)."""
    faults: FaultRates = field(default_factory=FaultRates)
    seed: int = 0
    """Seeds fault decisions and latency draws (per request content, so concurrency does not matter)."""
    retry_after_s: float = 1.0
    """`Retry-After` sent with injected 429s."""
    hang_s: float = 30.0
    """How long an injected timeout holds the request."""
    plans: list[dict[str, Any]] = field(default_factory=list)
    """Scripted planner plans (see `utils.llm_stub.planner`)."""
    models: tuple[str, ...] = ("stub",)
    """Names listed by `/v1/models` (every name is accepted by `/v1/chat/completions` unless `strict_models`)."""
    strict_models: bool = False
    """Answer 404 `model_not_found` for a model not in `models`, as a real server does."""
    api_key: str | None = None
    """Require `Authorization: Bearer <api_key>` (401 otherwise)."""
    tools: bool = True
    """Accept tool definitions; False answers 400 to a request with tools (a server without tool calling)."""


def parse_latency(text: str) -> tuple[float, float]:
    """`"500"` → (500, 500); `"100-900"` → (100, 900)."""
    low, sep, high = text.partition("-")
    try:
        bounds = (float(low), float(high if sep else low))
    except ValueError as exc:
        raise ValueError(f"--latency-ms wants N or LOW-HIGH (milliseconds), got {text!r}") from exc
    if bounds[0] < 0 or bounds[1] < bounds[0]:
        raise ValueError(f"--latency-ms {text!r}: need 0 <= LOW <= HIGH")
    return bounds


def load_plans(path: Path | str) -> list[dict[str, Any]]:
    """Read a planner script: `{"plans": [{"match"?: str, "steps": [...]}, ...]}` (JSON)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    plans = data.get("plans") if isinstance(data, dict) else data
    if not isinstance(plans, list) or not all(isinstance(p, dict) and isinstance(p.get("steps"), list) for p in plans):
        raise ValueError(f"{path}: expected {{\"plans\": [{{\"match\": ..., \"steps\": [...]}}]}}")
    return plans
