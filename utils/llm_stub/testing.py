"""Start the stub for tests and benchmarks: in a background thread of this process, or as a subprocess.

```python
with run_stub(StubConfig(latency_ms=(5, 5))) as stub:
    client = LLMClient(env={"OPENAI_BASE_URL": stub.base_url})
    ...
    stub.stats()   # the server's counters
```
Both bind 127.0.0.1 on a free port chosen by the OS. The listening socket exists before the server
starts, so requests made right away queue in the backlog instead of failing.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn

from utils.llm import ClientConfig, HttpBackend, LLMCache, LLMClient, OpenAITransport, RetryPolicy
from utils.llm.transport_raw import RawHTTPTransport
from utils.llm_stub.app import StubServer, create_app
from utils.llm_stub.config import StubConfig

STARTUP_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class StubHandle:
    """A running stub."""

    url: str
    """`http://127.0.0.1:PORT`."""
    server: StubServer | None = None
    """The in-process server (None for a subprocess)."""

    @property
    def base_url(self) -> str:
        """OpenAI base URL (`…/v1`)."""
        return self.url + "/v1"

    def model(self, name: str = "stub") -> str:
        """Generic model name that points at this stub: `openai-compatible:<name>@<base_url>`."""
        return f"openai-compatible:{name}@{self.base_url}"

    def stats(self) -> dict[str, Any]:
        """`GET /stats`."""
        with urllib.request.urlopen(self.url + "/stats", timeout=10) as response:  # noqa: S310 - loopback URL
            return json.loads(response.read())

    def reset_stats(self) -> None:
        """`POST /stats/reset`."""
        request = urllib.request.Request(self.url + "/stats/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10):  # noqa: S310 - loopback URL
            pass


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop when installed: with the default asyncio loop each reply waits ~40 ms (delayed ACK)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    return sock


@contextmanager
def run_stub(config: StubConfig | None = None) -> Iterator[StubHandle]:
    """Run the stub in a daemon thread with its own event loop; stop it on exit."""
    app = create_app(config)
    stub: StubServer = app.state.stub
    sock = _listening_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           timeout_graceful_shutdown=1))
    loop = _new_loop()
    failure: list[BaseException] = []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.serve(sockets=[sock]))
        except BaseException as exc:  # reported to the caller on exit
            failure.append(exc)
        finally:
            loop.close()

    thread = threading.Thread(target=serve, name=f"llm-stub-{port}", daemon=True)
    thread.start()
    try:
        yield StubHandle(f"http://127.0.0.1:{port}", stub)
    finally:
        if not loop.is_closed():
            loop.call_soon_threadsafe(stub.closing.set)
        server.should_exit = True
        thread.join(timeout=STARTUP_TIMEOUT_S)
        sock.close()
    if failure:
        raise RuntimeError(f"the stub server failed: {failure[0]!r}") from failure[0]


@contextmanager
def run_stub_process(args: Sequence[str] = ()) -> Iterator[StubHandle]:
    """Run `python -m utils.llm_stub --port 0 ARGS` and wait for its READY line."""
    process = subprocess.Popen(  # noqa: S603 - our own module, fixed interpreter
        [sys.executable, "-m", "utils.llm_stub", "--port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("READY "):
            _, err = process.communicate(timeout=STARTUP_TIMEOUT_S)
            raise RuntimeError(f"the stub did not start: {line or err.strip()}")
        yield StubHandle(line.split(" ", 1)[1].removesuffix("/v1"))
    finally:
        process.terminate()
        try:
            process.wait(timeout=STARTUP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class RecordedSleep:
    """An injectable `sleep` that records the requested waits and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def stub_client(handle: StubHandle, *, timeout_s: float = 5.0, max_attempts: int = 4,
                cache: LLMCache | None = None, sleep: RecordedSleep | None = None,
                http_backend: HttpBackend = "auto") -> LLMClient:
    """An `LLMClient` for tests against `handle`: no real back-off waits, no environment read."""
    config = ClientConfig(timeout_s=timeout_s, retry=RetryPolicy(max_attempts=max_attempts))
    transport = RawHTTPTransport() if http_backend == "raw" else OpenAITransport(http_backend)
    return LLMClient(transport=transport, cache=cache, config=config, env={},
                     sleep=sleep or RecordedSleep(), rng=random.Random(0))
