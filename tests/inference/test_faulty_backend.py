"""`FaultyBackend`: the same policy engine on a real-tool bridge; Gecko's fault header on the client side;
robustness traces from call records."""

from __future__ import annotations

import json
from typing import Any

import httpx

from inference.gecko import GeckoClient
from inference.gecko.backend import GeckoToolBackend
from inference.tools import CatalogTool, ToolCallRequest, ToolCatalog, ToolExecutor, ToolOutcome
from inference.tools.faults import FaultyBackend
from inference.tools.robustness import robustness_of
from utils.faults import parse_policy

PARAMS = {"type": "object", "properties": {"id": {"type": "string"}, "n": {"type": "integer"}}, "required": ["id"],
          "additionalProperties": False}
GET = CatalogTool("shop", "get_order", "get_order", "get_order", parameters=PARAMS, access="read")
PUT = CatalogTool("shop", "update_order", "update_order", "update_order", parameters=PARAMS, access="write")


class RealShop:
    """A tiny real-tool backend over an in-memory order book."""

    def __init__(self) -> None:
        self.orders: dict[str, dict[str, Any]] = {"A": {"id": "A", "n": 1, "status": "placed"}}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        self.calls.append((tool.operation_id, dict(arguments)))
        order = self.orders.get(arguments["id"])
        if order is None:
            return ToolOutcome(False, '{"error":"no such order"}', error_kind="tool_error")
        if tool.access == "write":
            order["n"] = arguments.get("n", order["n"])
        return ToolOutcome(True, json.dumps(order), body=dict(order))

    def patch(self, ops: list[dict[str, Any]]) -> None:
        for op in ops:
            key, field = op["path"].strip("/").split("/")
            self.orders[key][field] = op["value"]


def _faulty(shop: RealShop, *rules: dict, seed: int = 0, **kwargs: Any) -> tuple[FaultyBackend, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    policy = parse_policy({"seed": seed, "rules": list(rules)})
    return FaultyBackend(shop, policy, sleep=sleep, patch_state=shop.patch, **kwargs), slept


async def test_blocking_faults_never_reach_the_real_tool_and_read_like_a_service_error() -> None:
    shop = RealShop()
    backend, _ = _faulty(shop, {"name": "limit", "when": {"calls": [1]}, "do": {"kind": "rate_limit", "retry_after": 3}},
                         {"name": "lost", "when": {"calls": [2]}, "do": {"kind": "timeout", "executed": True}})
    limited = await backend.execute(PUT, {"id": "A", "n": 5})
    assert not limited.ok and limited.status == 429 and limited.error_kind == "service_error"
    assert json.loads(limited.content) == {"error": "Too Many Requests", "status": 429,
                                           "detail": "rate limit exceeded; retry after 3 s", "retry_after": 3.0}
    assert limited.blocked_by_fault and shop.calls == []
    lost = await backend.execute(PUT, {"id": "A", "n": 7})
    assert not lost.ok and lost.status == 504 and not lost.blocked_by_fault
    assert shop.orders["A"]["n"] == 7  # the write happened; its answer was lost
    assert [r["rule"] for r in backend.records] == ["limit", "lost"] and backend.records[0]["tool"] == "update_order"


async def test_state_level_interventions_on_a_real_bridge() -> None:
    shop = RealShop()
    backend, slept = _faulty(
        shop,
        {"name": "late", "when": {"calls": [1]}, "do": {"kind": "delay", "seconds": 2}},
        {"name": "stale", "when": {"access": "read"}, "do": {"kind": "stale_read"}},
        {"name": "someone", "when": {"calls": [3]},
         "do": {"kind": "external_change", "patch": [{"op": "replace", "path": "/A/status", "value": "cancelled"}]}},
        {"name": "damage", "when": {"calls": [4]}, "do": {"kind": "corrupt", "mode": "null_field"}},
    )
    first = await backend.execute(GET, {"id": "A"})
    assert first.ok and first.fault["kind"] == "delay" and slept == [2.0]
    await backend.execute(PUT, {"id": "A", "n": 2})
    changed = await backend.execute(PUT, {"id": "A", "n": 3})
    assert changed.fault["applied"] is True and changed.body["status"] == "cancelled"  # someone changed it first
    damaged = await backend.execute(PUT, {"id": "A", "n": 4})
    assert damaged.fault["kind"] == "corrupt" and None in json.loads(damaged.content).values()
    stale = await backend.execute(GET, {"id": "A"})
    assert stale.ok and stale.body == first.body and stale.fault["kind"] == "stale_read"  # n is still 1
    assert stale.blocked_by_fault and len([c for c in shop.calls if c[0] == "get_order"]) == 1


async def test_constraints_go_to_the_user_where_there_is_one() -> None:
    rules = [{"name": "new", "when": {"calls": [1]}, "do": {"kind": "constraint", "text": "Ship it today."}},
             {"name": "ask", "when": {"calls": [2]}, "do": {"kind": "constraint", "text": "Use n=9.", "deliver": "user"}}]
    with_user, _ = _faulty(RealShop(), *rules, user_channel=True)
    noticed = await with_user.execute(GET, {"id": "A"})
    assert json.loads(noticed.content)["_notice"] == "Ship it today." and noticed.body["_notice"] == "Ship it today."
    quiet = await with_user.execute(GET, {"id": "A"})
    assert "_notice" not in quiet.content and with_user.take_user_messages() == ["Use n=9."]
    assert with_user.take_user_messages() == [] and [c["id"] for c in with_user.constraints] == ["constraint-1",
                                                                                                 "constraint-2"]
    without_user, _ = _faulty(RealShop(), *rules)
    await without_user.execute(GET, {"id": "A"})
    assert json.loads((await without_user.execute(GET, {"id": "A"})).content)["_notice"] == "Use n=9."


async def test_the_bridge_replays_exactly_and_its_metrics_count_what_happened() -> None:
    rules = [{"name": "flaky", "when": {"probability": 0.4}, "do": {"kind": "unavailable"}}]

    async def run() -> tuple[list[dict], list]:
        backend, _ = _faulty(RealShop(), *rules, seed=9)
        executor = ToolExecutor(ToolCatalog([GET, PUT]), backend)
        records = [await executor.execute(ToolCallRequest(str(i), "update_order" if i % 2 else "get_order",
                                                          json.dumps({"id": "A", "n": i})))
                   for i in range(20)]
        return backend.records, records

    first, records = await run()
    assert first == (await run())[0] and 0 < len(first) < 20
    bad = ToolExecutor(ToolCatalog([GET, PUT]), RealShop())
    records.append(await bad.execute(ToolCallRequest("x", "get_order", json.dumps({"id": "A", "extra": 1}))))
    counts = robustness_of({"real": [records]})
    assert counts["real"]["injected_errors"] == len(first) and counts["real"]["calls"] == 21
    assert counts["real"]["compliant"] == 20 and counts["all"] == counts["real"]


async def test_gecko_backend_shows_an_injected_error_as_the_bridge_does() -> None:
    fault = {"rule": "down", "kind": "unavailable", "level": "tool", "call": 1, "executed": False, "retry_after": 1.0}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"type": "urn:gecko:problem:service-unavailable", "title": "Service Unavailable",
                                         "status": 503, "detail": "the service is temporarily unavailable"},
                              headers={"X-Gecko-Fault": json.dumps(fault), "Retry-After": "1"})

    async with GeckoClient("http://gecko.test", transport=httpx.MockTransport(handler), retries=0) as client:
        outcome = await GeckoToolBackend(client, "s1").execute(PUT, {"id": "A"})
    bridge, _ = _faulty(RealShop(), {"name": "down", "when": {"calls": [1]}, "do": {"kind": "unavailable"}})
    real = await bridge.execute(PUT, {"id": "A"})
    assert outcome.status == real.status == 503 and outcome.error_kind == real.error_kind == "service_error"
    assert outcome.content == real.content and outcome.fault == fault and outcome.blocked_by_fault
