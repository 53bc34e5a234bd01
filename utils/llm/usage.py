"""Usage accounting: one record per LLM call, summed per role and model, rendered for /metrics.

A usage record is a plain dict (it travels in session history and JSON files) with these keys:

| key | type | meaning |
|---|---|---|
| `role` | str | the usage role, one of `ROLES` (from `utils.roles.CALL_ROLES`) |
| `model` | str | the configured name (alias or generic form) |
| `api_model` | str | the model id sent to the API |
| `provider` | str | openai, deepseek, qwen, openai-compatible |
| `input_tokens` | int | prompt tokens billed (0 for a cache hit) |
| `output_tokens` | int | completion tokens billed (0 for a cache hit) |
| `latency_s` | float | wall time of the call, retries and back-off included |
| `cached` | bool | answered from the cache, no request made |
| `cost_usd` | float or None | from the price table; None when the model has no price |
| `attempts` | int | HTTP requests made (0 for a cache hit) |
| `ok` | bool | a reply was obtained |
| `error` | str or None | failure kind when not ok (`timeout`, `rate_limit`, `server`, `connection`, `auth`, `request`, `other`) |
| `prompt_version` | str | version of the stage prompt ("" when none) |
| `purpose` | str | `call`, or `repair` for the structured-output repair round |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from utils.roles import CALL_ROLES

ROLES: tuple[str, ...] = tuple(role.name for role in CALL_ROLES)
"""Every usage role, server stages first."""


class UsageRecord(TypedDict):
    """One LLM call (see the module docstring for the meaning of each key)."""

    role: str
    model: str
    api_model: str
    provider: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cached: bool
    cost_usd: float | None
    attempts: int
    ok: bool
    error: str | None
    prompt_version: str
    purpose: str


@dataclass
class UsageTotals:
    """Sums over a set of usage records."""

    calls: int = 0
    """Calls made by the stages, cache hits and failures included."""
    cache_hits: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    """Calls with tokens but no known price (their cost is missing from `cost_usd`)."""

    def add(self, record: UsageRecord | Mapping[str, Any]) -> None:
        """Count one record."""
        self.calls += 1
        self.cache_hits += int(bool(record.get("cached")))
        self.errors += int(not record.get("ok", True))
        self.input_tokens += int(record.get("input_tokens") or 0)
        self.output_tokens += int(record.get("output_tokens") or 0)
        self.latency_s += float(record.get("latency_s") or 0.0)
        cost = record.get("cost_usd")
        if cost is None:
            self.unpriced_calls += int(bool(record.get("input_tokens") or record.get("output_tokens")))
        else:
            self.cost_usd += float(cost)

    def merge(self, other: UsageTotals) -> None:
        """Add another total into this one."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def public(self) -> dict[str, Any]:
        """JSON form (cost rounded to 1e-6 USD)."""
        data = asdict(self)
        data["cost_usd"] = round(self.cost_usd, 6)
        data["latency_s"] = round(self.latency_s, 6)
        return data


_METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("calls", "calls_total", "counter", "LLM calls made by Gecko stages (cache hits and failures included)."),
    ("cache_hits", "cache_hits_total", "counter", "LLM calls answered from the cache."),
    ("errors", "errors_total", "counter", "LLM calls that produced no reply."),
    ("input_tokens", "input_tokens_total", "counter", "Prompt tokens billed."),
    ("output_tokens", "output_tokens_total", "counter", "Completion tokens billed."),
    ("latency_s", "latency_seconds_total", "counter", "Wall time spent in LLM calls."),
    ("cost_usd", "cost_usd_total", "counter", "Cost in USD from the price table."),
)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class UsageAggregator:
    """Sums usage records per (role, model). Owned by one event loop; not shared across threads."""

    def __init__(self, records: Iterable[UsageRecord | Mapping[str, Any]] = ()) -> None:
        self._totals: dict[tuple[str, str], UsageTotals] = {}
        self.extend(records)

    def add(self, record: UsageRecord | Mapping[str, Any]) -> None:
        """Count one record."""
        key = (str(record.get("role", "")), str(record.get("model", "")))
        self._totals.setdefault(key, UsageTotals()).add(record)

    def extend(self, records: Iterable[UsageRecord | Mapping[str, Any]]) -> None:
        """Count several records."""
        for record in records:
            self.add(record)

    def merge(self, other: UsageAggregator) -> None:
        """Add another aggregator's totals (e.g. from another worker)."""
        for key, totals in other._totals.items():
            self._totals.setdefault(key, UsageTotals()).merge(totals)

    def totals(self) -> dict[tuple[str, str], UsageTotals]:
        """(role, model) → totals."""
        return dict(self._totals)

    def total(self) -> UsageTotals:
        """Sum over everything."""
        out = UsageTotals()
        for totals in self._totals.values():
            out.merge(totals)
        return out

    def summary(self) -> dict[str, Any]:
        """JSON for `GET /sessions/{id}/usage`: per role (with its models) and overall."""
        roles: dict[str, dict[str, Any]] = {}
        for (role, model), totals in sorted(self._totals.items()):
            entry = roles.setdefault(role, {"total": UsageTotals(), "models": {}})
            entry["total"].merge(totals)
            entry["models"][model] = totals.public()
        return {
            "roles": {role: {"total": e["total"].public(), "models": e["models"]} for role, e in roles.items()},
            "total": self.total().public(),
        }

    def prometheus(self, prefix: str = "gecko_llm") -> str:
        """Prometheus text exposition format (0.0.4) of the per-(role, model) counters."""
        lines: list[str] = []
        for field_name, suffix, kind, text in _METRICS:
            name = f"{prefix}_{suffix}"
            lines.append(f"# HELP {name} {text}")
            lines.append(f"# TYPE {name} {kind}")
            for (role, model), totals in sorted(self._totals.items()):
                value = getattr(totals, field_name)
                labels = f'role="{_label(role)}",model="{_label(model)}"'
                shown = repr(round(value, 9)) if isinstance(value, float) else str(value)
                lines.append(f"{name}{{{labels}}} {shown}")
        return "\n".join(lines) + "\n"
