"""Usage aggregation and the Prometheus rendering."""

from __future__ import annotations

from utils.llm import ROLES, UsageAggregator
from utils.roles import CALL_ROLES, SERVER_ROLES


def record(role: str, model: str = "gpt-4o-mini", **kw: object) -> dict[str, object]:
    base = {"role": role, "model": model, "api_model": model, "provider": "openai", "input_tokens": 100,
            "output_tokens": 10, "latency_s": 0.5, "cached": False, "cost_usd": 0.001, "attempts": 1, "ok": True,
            "error": None, "prompt_version": "v1", "purpose": "call"}
    base.update(kw)
    return base


def test_roles_come_from_the_role_table() -> None:
    assert ROLES == tuple(role.name for role in CALL_ROLES) and len(set(ROLES)) == len(ROLES)
    assert {call.name for role in SERVER_ROLES for call in role.calls} <= set(ROLES)
    assert {"validator", "responder", "state", "bootstrap", "checklist", "judge", "planner", "user"} <= set(ROLES)


def test_totals_per_role_and_model() -> None:
    agg = UsageAggregator([
        record("responder"), record("responder"),
        record("responder", cached=True, input_tokens=0, output_tokens=0, cost_usd=0.0, attempts=0),
        record("validator", ok=False, error="timeout", input_tokens=0, output_tokens=0, cost_usd=None),
        record("judge", model="openai-compatible:x@http://h/v1", cost_usd=None),
    ])
    summary = agg.summary()
    responder = summary["roles"]["responder"]["total"]
    assert responder["calls"] == 3 and responder["cache_hits"] == 1 and responder["input_tokens"] == 200
    assert responder["cost_usd"] == 0.002
    assert summary["roles"]["validator"]["total"]["errors"] == 1
    assert summary["roles"]["judge"]["total"]["unpriced_calls"] == 1
    assert summary["total"]["calls"] == 5


def test_merge() -> None:
    a, b = UsageAggregator([record("state")]), UsageAggregator([record("state"), record("planner")])
    a.merge(b)
    assert a.summary()["roles"]["state"]["total"]["calls"] == 2 and a.total().calls == 3


def test_prometheus_text() -> None:
    text = UsageAggregator([record("responder"), record("judge", model='we"ird')]).prometheus()
    lines = text.splitlines()
    assert "# TYPE gecko_llm_calls_total counter" in lines
    assert 'gecko_llm_calls_total{role="responder",model="gpt-4o-mini"} 1' in lines
    assert 'gecko_llm_input_tokens_total{role="judge",model="we\\"ird"} 100' in lines
    assert any(line.startswith('gecko_llm_cost_usd_total{role="responder"') for line in lines)
    assert text.endswith("\n")
    for line in lines:
        assert line.startswith("#") or line.split(" ")[-1].replace(".", "").replace("e-", "").isdigit()
