"""What operators read: Prometheus metrics summed over every worker, JSON logs, and a request id per request.

- `metrics`: `GeckoMetrics` (requests and latency per route kind, LLM calls, tokens and cost per role, faults
  injected, store errors) in prometheus-client's multiprocess mode when the server runs several workers;
- `logs`: `configure_logging` (`--log-format text|json`), every record of a request carrying its id;
- `middleware`: `TelemetryMiddleware`, which gives each request its id (`X-Request-ID`, echoed) and counts it.
"""

from gecko.telemetry.logs import configure_logging, current_request_id
from gecko.telemetry.metrics import GeckoMetrics, prepare_multiprocess, route_kind
from gecko.telemetry.middleware import REQUEST_ID_HEADER, TelemetryMiddleware

__all__ = ["REQUEST_ID_HEADER", "GeckoMetrics", "TelemetryMiddleware", "configure_logging", "current_request_id",
           "prepare_multiprocess", "route_kind"]
