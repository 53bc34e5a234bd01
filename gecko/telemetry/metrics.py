"""Gecko's Prometheus metrics, summed over every worker of the server.

uvicorn runs several worker processes behind one port; a scrape reaches one of them. In prometheus-client's
multiprocess mode each process writes its samples to memory-mapped files in one directory
(`PROMETHEUS_MULTIPROC_DIR`, made empty by the master at start-up, before any worker exists) and `/metrics` sums
the files of every process, so a counter is the server's, whichever worker answers. Without the variable (one
process: tests, the simulator) the metrics are this object's own registry.

| metric | labels | what |
|---|---|---|
| `gecko_requests_total` | kind, status | HTTP requests by route kind (`tool`, `mcp`, `session`, `ui`, `catalog`, `meta`) |
| `gecko_request_duration_seconds` | kind | histogram of the time to answer them |
| `gecko_llm_calls_total` | role, model, outcome | LLM calls of the server's stages (`ok`, `cached`, `error`) |
| `gecko_llm_tokens_total` | role, model, direction | tokens billed (`input`, `output`) |
| `gecko_llm_cost_usd_total` | role, model | cost from the price table |
| `gecko_llm_call_duration_seconds` | role | histogram of LLM call wall time (retries included) |
| `gecko_faults_injected_total` | level, kind | faults the state controller injected |
| `gecko_store_errors_total` | | requests answered 503 because the session store did not answer |

Gauges that every worker sees alike (`gecko_sessions`, `gecko_tools`) are added by the route at scrape time.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

MULTIPROC_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
REQUEST_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0)
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("/mcp", "mcp"), ("/ui", "ui"), ("/sessions", "session"), ("/session-id", "session"),
    ("/set-session-state", "session"), ("/init-session-state", "session"), ("/get-session-state", "session"),
    ("/update-state-from-real", "session"), ("/health", "meta"), ("/metrics", "meta"), ("/toolkits", "catalog"),
    ("/tools/search", "catalog"), ("/openapi.json", "catalog"), ("/docs", "catalog"), ("/redoc", "catalog"),
)
"""Path prefix → route kind; every other path is a tool call (by operationId or by the document's own path)."""
disable_created_metrics()  # process-wide: the `_created` samples would double every series (multiprocess mode has none)


def route_kind(path: str) -> str:
    """The route kind of a request path: `tool`, `mcp`, `session`, `ui`, `catalog` or `meta`."""
    for prefix, kind in _PREFIXES:
        if path.startswith(prefix) and (len(path) == len(prefix) or path[len(prefix)] in "/?"):
            return kind
    return "tool"


def prepare_multiprocess(directory: Path) -> None:
    """Make `directory` the empty metrics directory of a server about to start its workers (they inherit the
    variable; call it in the master before any metric exists)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, mode=0o700)
    os.environ[MULTIPROC_VARIABLE] = str(directory)


class GeckoMetrics:
    """The metrics of one worker (see the module docstring), on a registry of its own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        registry = self.registry
        self.requests = Counter("gecko_requests", "HTTP requests answered, by route kind and status.",
                                ["kind", "status"], registry=registry)
        self.request_seconds = Histogram("gecko_request_duration_seconds", "Time to answer an HTTP request.",
                                         ["kind"], buckets=REQUEST_BUCKETS, registry=registry)
        self.llm_calls = Counter("gecko_llm_calls", "LLM calls made by Gecko's stages.",
                                 ["role", "model", "outcome"], registry=registry)
        self.llm_tokens = Counter("gecko_llm_tokens", "LLM tokens billed.", ["role", "model", "direction"],
                                  registry=registry)
        self.llm_cost = Counter("gecko_llm_cost_usd", "LLM cost in USD from the price table.", ["role", "model"],
                                registry=registry)
        self.llm_seconds = Histogram("gecko_llm_call_duration_seconds", "Wall time of an LLM call, retries included.",
                                     ["role"], buckets=LLM_BUCKETS, registry=registry)
        self.faults = Counter("gecko_faults_injected", "Faults injected by the state controller.", ["level", "kind"],
                              registry=registry)
        self.store_errors = Counter("gecko_store_errors", "Requests answered 503: the session store did not answer.",
                                    registry=registry)
        self._request_children: dict[tuple[str, int], Any] = {}
        self._duration_children: dict[str, Any] = {}

    def observe_request(self, kind: str, status: int, seconds: float) -> None:
        """Count one answered request (the hot path: label children are looked up once)."""
        counter = self._request_children.get((kind, status))
        if counter is None:
            counter = self._request_children[(kind, status)] = self.requests.labels(kind, str(status))
        counter.inc()
        histogram = self._duration_children.get(kind)
        if histogram is None:
            histogram = self._duration_children[kind] = self.request_seconds.labels(kind)
        histogram.observe(seconds)

    def llm_usage(self, record: Mapping[str, Any]) -> None:
        """Count one LLM usage record (`utils.llm.usage.UsageRecord`)."""
        role, model = str(record.get("role", "")), str(record.get("model", ""))
        outcome = "error" if not record.get("ok", True) else "cached" if record.get("cached") else "ok"
        self.llm_calls.labels(role, model, outcome).inc()
        self.llm_tokens.labels(role, model, "input").inc(int(record.get("input_tokens") or 0))
        self.llm_tokens.labels(role, model, "output").inc(int(record.get("output_tokens") or 0))
        self.llm_cost.labels(role, model).inc(float(record.get("cost_usd") or 0.0))
        if not record.get("cached"):
            self.llm_seconds.labels(role).observe(float(record.get("latency_s") or 0.0))

    def fault_injected(self, level: str, kind: str) -> None:
        """Count one injected fault."""
        self.faults.labels(level, kind).inc()

    def store_error(self) -> None:
        """Count one request the store failed."""
        self.store_errors.inc()

    def render(self) -> bytes:
        """The Prometheus text of the whole server (every worker's files), or of this registry alone."""
        directory = os.environ.get(MULTIPROC_VARIABLE)
        if not directory:
            return generate_latest(self.registry)
        registry = CollectorRegistry(auto_describe=False)
        MultiProcessCollector(registry, path=directory)
        return generate_latest(registry)
