"""What operators read: Prometheus metrics summed over every worker, JSON logs, and a request id per request.

- `metrics`: `GeckoMetrics` (requests and latency per route kind, LLM calls, tokens and cost per role, faults
  injected, store errors) in prometheus-client's multiprocess mode when the server runs several workers;
- `logs`: `configure_logging` (`--log-format text|json`), every record of a request carrying its id;
- `middleware`: `TelemetryMiddleware`, which gives each request its id (`X-Request-ID`, echoed) and counts it.

Not here: OpenTelemetry trace export (GenAI semantic conventions for tool and LLM calls). It needs the SDK and an
exporter as an extra, spans opened around each pipeline stage and the LLM client, and context carried into the
deferred state updates; the request id in logs and history covers correlation until then.
"""

from gecko.telemetry.logs import configure_logging, current_request_id
from gecko.telemetry.metrics import GeckoMetrics, prepare_multiprocess, route_kind
from gecko.telemetry.middleware import REQUEST_ID_HEADER, TelemetryMiddleware

__all__ = ["REQUEST_ID_HEADER", "GeckoMetrics", "TelemetryMiddleware", "configure_logging", "current_request_id",
           "prepare_multiprocess", "route_kind"]
