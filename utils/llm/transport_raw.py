"""`RawHTTPTransport`: the OpenAI chat-completions wire format over aiohttp, without the SDK.

Opt-in (`http_backend="raw"`) for high-throughput local endpoints (the stub, vLLM, llama.cpp): it spends
about a quarter of the CPU per call of the SDK path. Failures are raised as `HTTPStatusFailure`,
`asyncio.TimeoutError` or `ConnectionError`, which `utils.llm.retry.classify_error` understands, so
retry decisions stay in one place. Real providers should use the default SDK transport.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from utils.aiohttp_pool import LazyAiohttpSession
from utils.llm.aliases import ModelSpec
from utils.llm.retry import HTTPStatusFailure
from utils.llm.transport import DEFAULT_MAX_CONNECTIONS, RawReply, parse_completion


class RawHTTPTransport:
    """Chat completions with one aiohttp session per event loop.

    Args:
        max_connections: connection limit per host.
    """

    def __init__(self, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> None:
        self._pool = LazyAiohttpSession(max_connections)

    async def complete(self, spec: ModelSpec, api_key: str, request: dict[str, Any], timeout: float,
                       headers: Mapping[str, str] | None = None) -> RawReply:
        """POST `request` (with extra HTTP `headers`) to `{base_url}/chat/completions` and parse the reply."""
        import aiohttp

        headers = {**(headers or {}), "Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        try:
            async with self._pool.get().post(
                f"{spec.base_url}/chat/completions", data=json.dumps(request), headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                body = await response.read()
                if response.status >= 400:
                    raise HTTPStatusFailure.from_body(response.status, body, dict(response.headers))
        except aiohttp.ServerTimeoutError as exc:
            raise TimeoutError(str(exc)) from exc
        except aiohttp.ClientError as exc:
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc
        return parse_completion(spec, body)

    async def aclose(self) -> None:
        await self._pool.aclose()
