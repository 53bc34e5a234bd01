#!/usr/bin/env python3
"""What hostile request bodies cost: in-process, the time from raw bytes to the server's answer (parse, JSON
limits, argument validation); over HTTP, the issue-13 attack (four 500k-item arrays at once against two
workers) and how long `/health` waits meanwhile.

In-process bodies (each under the 1 MiB byte limit, against the notes test toolkit's `create_note`, whose
`tags` hold at most 3 unique lowercase words; the limits are the defaults):
- `array_500k`: a 500,000-item array (976 KiB) → 413 at the array limit;
- `array_10k_last_bad`: `orders/place_order` with 9,999 valid order items and one invalid → 422 naming the
  array's maxItems and the bad item (the worst case of explaining: every item is looked at once);
- `nodes_100k`: 99,990 values in nested arrays → accepted by the limits, validated;
- `deep_64` / `deep_100k`: nesting at the limit (accepted) / 100,000 levels (413);
- `string_100k`: a 100,000-character string checked against a pattern.

Over HTTP, also the slow clients of issue 13 row 4 (`slow_clients`): `--slow-clients` connections (3,000 as in
the attack) that each declare a Content-Length larger than what they send, against a server whose request read
deadline is `--read-timeout` seconds; how long `/health` waits meanwhile, how many got their 408, and when the
last was let go (before: held ≥ 70 s, indefinitely).

Prints one JSON object: per body the median and worst of `--repeat` runs in ms, the largest of all
accepted bodies (`accepted_max_ms`), and the HTTP figures.

Run: `python perf/hostile_bodies.py [--repeat 5] [--no-http] [--slow-clients 3000] [--read-timeout 5]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from gecko.pipeline.validate.syntactic import validate_arguments
from gecko.toolkits.loader import load_toolkits
from utils.jsonlimits import JsonLimitExceeded, JsonValueRejected, parse_json
from utils.paths import REPO_ROOT
from utils.procs import gecko_server
from utils.settings import Settings

TOOLKITS = REPO_ROOT / "tests" / "data" / "openapi"
EXAMPLES = REPO_ROOT / "data" / "examples" / "openapi"


def compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def bodies() -> dict[str, tuple[str, bytes]]:
    """Name → (tool, body)."""
    note = {"title": "t", "body": "b"}
    items = [{"sku": "ABC-1234", "quantity": 1 + i % 99} for i in range(9_999)] + [{"sku": "bad", "quantity": 0}]
    raw = {
        "array_500k": compact({**note, "tags": [1] * 500_000}),
        "nodes_100k": compact({**note, "limits": {"low": 1, "high": 2, "grid": [[0] * 9_990] * 10}}),
        "deep_64": b'{"title":"t","body":"b","limits":{"low":1,"high":2,"x":' + b'{"a":' * 61 + b"1" + b"}" * 61 + b"}}",
        "deep_100k": b'{"title":"t","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "string_100k": compact({**note, "tags": ["a" * 100_000]}),
    }
    tools = {name: ("notes/create_note", body) for name, body in raw.items()}
    tools["array_10k_last_bad"] = ("orders/place_order", compact({"customer_email": "a@b.co", "items": items}))
    return tools


def answer(raw: bytes, operation, settings: Settings) -> str:
    """What the server answers for `raw` as the body of a call to `operation` (up to the runner)."""
    try:
        arguments = parse_json(raw, settings.json_limits())
    except JsonLimitExceeded:
        return "413"
    except (JsonValueRejected, ValueError):
        return "422"
    return "422" if validate_arguments(operation, arguments) else "200"


def in_process(repeat: int) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        registry = load_toolkits([TOOLKITS, EXAMPLES], cache_dir=Path(tmp))
    settings = Settings(_env_file=None)
    results: dict[str, dict[str, object]] = {}
    for name, (tool, raw) in bodies().items():
        operation = registry.get(*tool.split("/"))
        times, status = [], ""
        for _ in range(repeat):
            started = time.perf_counter()
            status = answer(raw, operation, settings)
            times.append((time.perf_counter() - started) * 1000)
        results[name] = {"bytes": len(raw), "status": status, "median_ms": round(statistics.median(times), 2),
                         "max_ms": round(max(times), 2)}
    return results


async def http_attack(url: str) -> dict[str, object]:
    """Four 500k-item arrays at once, and `/health` meanwhile (the attack of issue 13: 42 s, /health 22.7 s)."""
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        session = (await client.get("/session-id")).json()["session_id"]
        body = bodies()["array_500k"][1]
        headers = {"content-type": "application/json", "X-Session-ID": session}
        started = time.perf_counter()

        async def attack() -> int:
            return (await client.post("/notes/create_note", content=body, headers=headers)).status_code

        attacks = [asyncio.create_task(attack()) for _ in range(4)]
        await asyncio.sleep(0.01)
        health_started = time.perf_counter()
        assert (await client.get("/health")).status_code == 200
        health = time.perf_counter() - health_started
        statuses = await asyncio.gather(*attacks)
        total = time.perf_counter() - started
    return {"four_arrays_s": round(total, 3), "health_during_s": round(health, 3), "statuses": sorted(set(statuses))}


async def slow_clients(url: str, count: int, deadline_s: float) -> dict[str, object]:
    """`count` connections that declare 1,000 body bytes and send 9, then wait; `/health` meanwhile."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    head = (b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            b'{"state":')
    started = time.perf_counter()
    released: list[float] = []
    answers: list[bytes] = []

    async def hold() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(head)
        await writer.drain()
        try:
            answer = await asyncio.wait_for(reader.read(), timeout=deadline_s + 120)
        except (TimeoutError, ConnectionError):
            answer = b""
        released.append(time.perf_counter() - started)
        answers.append(answer[:12])
        writer.close()

    tasks = []
    for _ in range(count):
        tasks.append(asyncio.create_task(hold()))
        await asyncio.sleep(0)  # connect in order, without one burst of `count` SYNs
    opened = time.perf_counter() - started
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        health_started = time.perf_counter()
        assert (await client.get("/health")).status_code == 200
        health = time.perf_counter() - health_started
    await asyncio.gather(*tasks)
    return {"connections": count, "read_timeout_s": deadline_s, "opened_s": round(opened, 2),
            "health_during_s": round(health, 3), "answered_408": sum(a.startswith(b"HTTP/1.1 408") for a in answers),
            "last_released_s": round(max(released), 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP attack on a 2-worker server")
    parser.add_argument("--slow-clients", type=int, default=3000, help="slow connections at once (0: none)")
    parser.add_argument("--read-timeout", type=float, default=5.0, help="the server's --request-read-timeout")
    args = parser.parse_args()
    bodies = in_process(args.repeat)
    results: dict[str, object] = {"in_process": bodies}
    accepted = [r["max_ms"] for r in bodies.values() if r["status"] != "413"]
    results["accepted_max_ms"] = max(accepted)
    if not args.no_http:
        extra = ["--request-read-timeout", str(args.read_timeout)]
        with tempfile.TemporaryDirectory() as tmp, gecko_server([TOOLKITS], workers=2, state_dir=Path(tmp),
                                                                extra=extra) as url:
            results["http"] = asyncio.run(http_attack(url))
            if args.slow_clients:
                results["slow_clients"] = asyncio.run(slow_clients(url, args.slow_clients, args.read_timeout))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
