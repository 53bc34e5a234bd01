#!/usr/bin/env python3
"""CPU per LLM call of each HTTP backend under the LLM client: the stub (its own process, 0 ms) answers.

For `raw` (SDK-free aiohttp), `aiohttp` (the openai SDK over aiohttp) and `httpx` (the SDK's httpx2
pool), the client makes --calls chat calls with --concurrency in flight (cache off) and reports its own
CPU time per call (`time.process_time`, so the load of other processes matters less than for wall time)
and the throughput. Prints one JSON object. Run: `python perf/llm_transport.py [--calls 4000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from utils.llm.factory import HttpBackend, create_client
from utils.llm_stub.testing import run_stub_process
from utils.roles import VALIDATOR

BACKENDS: tuple[HttpBackend, ...] = ("raw", "aiohttp", "httpx")


async def _measure(model: str, backend: HttpBackend, calls: int, concurrency: int) -> dict[str, float]:
    client = create_client(http_backend=backend, max_concurrency=concurrency)
    messages = [{"role": "user", "content": "ping"}]
    semaphore = asyncio.Semaphore(concurrency)

    async def one(index: int) -> None:
        async with semaphore:
            await client.chat(model, [*messages, {"role": "user", "content": str(index)}], role=VALIDATOR.name)

    try:
        await asyncio.gather(*(one(i) for i in range(concurrency)))  # warm-up: open the connections
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(calls)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        await client.aclose()
    return {"cpu_ms_per_call": round(cpu / calls * 1000, 3), "calls_per_s": round(calls / wall, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    args = parser.parse_args()
    result: dict = {"bench": "llm_transport", "calls": args.calls, "concurrency": args.concurrency}
    with run_stub_process(["--latency-ms", "0"]) as stub:
        for backend in args.backends:
            result[backend] = asyncio.run(_measure(stub.model(), backend, args.calls, args.concurrency))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
