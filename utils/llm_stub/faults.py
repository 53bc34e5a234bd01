"""Deterministic fault and latency draws, keyed by request content and how often it was seen.

A draw depends on (seed, request body, occurrence number of that body), not on arrival order, so a
run with hundreds of concurrent requests injects the same faults every time, and a retry of the same
request gets a fresh draw.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from utils.llm_stub.config import FAULT_KINDS, StubConfig


def body_digest(body: Any) -> str:
    """sha256 of the canonical JSON of a request body."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


class FaultPlan:
    """Draws a fault kind (or None) and a latency for each request."""

    def __init__(self, config: StubConfig) -> None:
        self._config = config
        self._seen: Counter[str] = Counter()

    def _unit(self, digest: str, occurrence: int, salt: str) -> float:
        raw = hashlib.sha256(f"{self._config.seed}:{digest}:{occurrence}:{salt}".encode()).digest()
        return int.from_bytes(raw[:8], "big") / 2**64

    def draw(self, digest: str) -> tuple[str | None, float]:
        """(fault kind or None, latency in seconds) for the next occurrence of `digest`."""
        occurrence = self._seen[digest]
        self._seen[digest] += 1
        low, high = self._config.latency_ms
        latency = (low + (high - low) * self._unit(digest, occurrence, "latency")) / 1000
        u = self._unit(digest, occurrence, "fault")
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += getattr(self._config.faults, kind)
            if u < edge:
                return kind, latency
        return None, latency
