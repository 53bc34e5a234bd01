"""Telemetry pieces in process: route kinds, LLM usage and store errors in the metrics, JSON log lines with the
request id."""

from __future__ import annotations

import json
import logging
import shutil

from gecko.telemetry import GeckoMetrics, route_kind
from gecko.telemetry.logs import JsonFormatter, RequestIdFilter, reset_request_id, set_request_id
from tests.infra import require
from utils.procs import redis_server


def test_route_kinds() -> None:
    kinds = {path: route_kind(path) for path in (
        "/notes/create_note", "/mcp", "/mcp/notes", "/ui/sessions", "/sessions/abc/history", "/session-id",
        "/get-session-state", "/health", "/metrics", "/toolkits/notes", "/tools/search", "/openapi.json",
        "/pets/1", "/sessionsx/op")}
    assert kinds == {
        "/notes/create_note": "tool", "/mcp": "mcp", "/mcp/notes": "mcp", "/ui/sessions": "ui",
        "/sessions/abc/history": "session", "/session-id": "session", "/get-session-state": "session",
        "/health": "meta", "/metrics": "meta", "/toolkits/notes": "catalog", "/tools/search": "catalog",
        "/openapi.json": "catalog", "/pets/1": "tool", "/sessionsx/op": "tool"}


def test_llm_usage_per_role() -> None:
    metrics = GeckoMetrics()
    base = {"model": "m", "latency_s": 0.5, "cached": False, "ok": True}
    metrics.llm_usage({**base, "role": "responder", "input_tokens": 100, "output_tokens": 20, "cost_usd": 0.25})
    metrics.llm_usage({**base, "role": "judge", "input_tokens": 0, "output_tokens": 0, "cost_usd": None, "ok": False})
    text = metrics.render().decode()
    assert 'gecko_llm_tokens_total{direction="input",model="m",role="responder"} 100.0' in text
    assert 'gecko_llm_cost_usd_total{model="m",role="responder"} 0.25' in text
    assert 'gecko_llm_calls_total{model="m",outcome="error",role="judge"} 1.0' in text
    assert 'gecko_llm_call_duration_seconds_count{role="responder"} 1.0' in text


def test_json_log_lines_carry_the_request_id() -> None:
    record = logging.LogRecord("gecko", logging.WARNING, __file__, 1, "store %s", ("down",), None)
    token = set_request_id("req-7")
    try:
        RequestIdFilter().filter(record)
    finally:
        reset_request_id(token)
    line = json.loads(JsonFormatter().format(record))
    assert (line["message"], line["level"], line["request_id"], line["logger"]) == ("store down", "warning", "req-7",
                                                                                    "gecko")


def test_store_errors_are_counted(make_client) -> None:
    require(shutil.which("redis-server"), "redis-server is not installed (CI installs the Debian package redis-server)")
    with redis_server() as url:
        client = make_client(store=url)
        sid = client.get("/session-id").json()["session_id"]
    reply = client.post("/notes/create_note", json={"title": "t", "body": "b"}, headers={"X-Session-ID": sid})
    assert reply.status_code == 503
    metrics = client.get("/metrics")  # answers with the store down, without the store's gauge
    assert metrics.status_code == 200 and "gecko_sessions" not in metrics.text
    assert "gecko_store_errors_total 2.0" in metrics.text, metrics.text  # the call's and the scrape's
