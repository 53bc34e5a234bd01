"""Build the process-wide `LLMClient` from plain settings values."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from utils.llm.cache import LLMCache
from utils.llm.client import ClientConfig, LLMClient
from utils.llm.retry import RetryPolicy
from utils.llm.transport import ChatTransport, OpenAITransport
from utils.llm.transport_raw import RawHTTPTransport
from utils.llm.usage import UsageRecord

CACHE_FILE = "llm_cache.db"
HttpBackend = Literal["auto", "aiohttp", "httpx", "raw"]
"""HTTP stack under the client (`Settings.llm_http_backend` says what each is)."""


def create_client(
    *,
    cache_path: Path | str | None = None,
    cache_enabled: bool = True,
    timeout_s: float = ClientConfig.timeout_s,
    max_attempts: int = RetryPolicy.max_attempts,
    max_concurrency: int = ClientConfig.max_concurrency,
    http_backend: HttpBackend = "auto",
    usage_sink: Callable[[UsageRecord], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> LLMClient:
    """An `LLMClient` for a worker process.

    Args:
        cache_path: SQLite file of the reply cache (e.g. `settings.state_dir / "llm_cache.db"`); None: no cache.
        cache_enabled: False disables the cache (`--no-cache`), even when a path is given.
        timeout_s: per-request timeout.
        max_attempts: requests per call, the first included (retries = attempts - 1).
        max_concurrency: concurrent requests per endpoint (base URL + model).
        http_backend: connection layer under the openai SDK (see `OpenAITransport`), or `raw` for the
            SDK-free `RawHTTPTransport` (high-throughput local endpoints).
        usage_sink: receives every usage record (e.g. a `UsageAggregator.add` for /metrics).
        env: environment for keys and base URLs (default `os.environ`).
    """
    cache = LLMCache(cache_path) if cache_path is not None and cache_enabled else None
    config = ClientConfig(timeout_s=timeout_s, retry=RetryPolicy(max_attempts=max_attempts),
                          max_concurrency=max_concurrency, cache_enabled=cache_enabled)
    transport: ChatTransport
    if http_backend == "raw":
        transport = RawHTTPTransport(max_concurrency)
    else:
        transport = OpenAITransport(http_backend, max_connections=max_concurrency)
    return LLMClient(transport=transport, cache=cache, config=config, env=env, usage_sink=usage_sink)
