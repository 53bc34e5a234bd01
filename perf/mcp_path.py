#!/usr/bin/env python3
"""MCP `tools/call` against the HTTP route on the same toolkit, 2 Gecko workers; and the time to build the twin
of `@modelcontextprotocol/server-filesystem`.

Per scenario (valid write, valid read, invalid call), for --seconds at --concurrency connections, one session
per connection: the HTTP route (`POST /notes/{op}`) and MCP (`POST /mcp/notes`, JSON-RPC `tools/call` on a
session opened with `initialize`), the load from a separate process. Prints one JSON object.
Run: `python bench/mcp_path.py [--seconds 10] [--concurrency 64]` (the twin figure needs `make npm-tools`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from utils.paths import REPO_ROOT
from utils.procs import gecko_server

TOOLKITS = REPO_ROOT / "tests" / "data" / "openapi"
NPM_BIN = REPO_ROOT / ".npm-tools" / "node_modules" / ".bin"
SCENARIOS = {
    "valid_write": ("create_note", {"title": "note {i}", "body": "text", "priority": 3}, False),
    "valid_read": ("get_note", {"note_id": "N-{i}"}, False),
    "invalid": ("create_note", {"body": 1, "priority": 0, "nope": True}, True),
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


def _arguments(template: dict, tag: str) -> dict:
    return json.loads(json.dumps(template).replace("{i}", tag))


async def _open_sessions(http, transport: str, n: int) -> list[dict[str, str]]:
    headers = []
    for _ in range(n):
        if transport == "http":
            async with http.get("/session-id") as r:
                headers.append({"X-Session-ID": (await r.json())["session_id"]})
            continue
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
        async with http.post("/mcp/notes", json=init, headers=MCP_HEADERS) as r:
            await r.read()
            headers.append({**MCP_HEADERS, "Mcp-Session-Id": r.headers["mcp-session-id"]})
    return headers


async def _drive(url: str, transport: str, scenario: str, seconds: float, concurrency: int) -> dict:
    import aiohttp

    tool, template, expect_error = SCENARIOS[scenario]
    latencies: list[float] = []
    errors = 0
    async with aiohttp.ClientSession(base_url=url, connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        sessions = await _open_sessions(http, transport, concurrency)
        deadline = time.perf_counter() + seconds

        async def worker(index: int) -> None:
            nonlocal errors
            i = 0
            while time.perf_counter() < deadline:
                arguments = _arguments(template, f"{index}-{i}")
                start = time.perf_counter()
                if transport == "http":
                    async with http.post(f"/notes/{tool}", json=arguments, headers=sessions[index]) as r:
                        await r.read()
                        failed = r.status != (422 if expect_error else 200)
                else:
                    call = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                            "params": {"name": tool, "arguments": arguments}}
                    async with http.post("/mcp/notes", json=call, headers=sessions[index]) as r:
                        reply = await r.json(content_type=None)
                        failed = r.status != 200 or reply.get("result", {}).get("isError") is not expect_error
                errors += failed
                latencies.append(time.perf_counter() - start)
                i += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    q = statistics.quantiles(latencies, n=100)
    return {"requests": len(latencies), "errors": errors, "req_per_s": round(len(latencies) / elapsed, 1),
            "p50_ms": round(q[49] * 1000, 2), "p99_ms": round(q[98] * 1000, 2)}


def _run(url: str, transport: str, scenario: str, seconds: float, concurrency: int, out: mp.Queue) -> None:
    out.put(asyncio.run(_drive(url, transport, scenario, seconds, concurrency)))


def _twin_build_seconds(runs: int) -> dict:
    """Median wall time of `python -m gecko.convert mcp --server 'mcp-server-filesystem DIR'`."""
    server = NPM_BIN / "mcp-server-filesystem"
    if not server.exists():
        return {"skipped": "run `make npm-tools` first"}
    env = {**os.environ, "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "gecko.convert", "mcp", "--server", f"{server} {tmp}",
                            "--title", "filesystem", "-o", f"{tmp}/filesystem.json"], check=True, env=env,
                           capture_output=True, cwd=REPO_ROOT)
            times.append(time.perf_counter() - started)
        tools = len(json.loads(Path(tmp, "filesystem.json").read_text())["paths"])
    return {"tools": tools, "runs": runs, "median_s": round(statistics.median(times), 3),
            "min_s": round(min(times), 3), "command": "python -m gecko.convert mcp --server 'mcp-server-filesystem DIR'"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--twin-runs", type=int, default=3)
    args = parser.parse_args()
    results: dict = {"bench": "mcp_path", "workers": args.workers, "concurrency": args.concurrency,
                     "seconds": args.seconds, "load1": round(os.getloadavg()[0], 2), "scenarios": {}}
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as state, gecko_server([TOOLKITS], workers=args.workers,
                                                              state_dir=Path(state)) as url:
        for scenario in SCENARIOS:
            row = {}
            for transport in ("http", "mcp"):
                out: mp.Queue = ctx.Queue()
                proc = ctx.Process(target=_run, args=(url, transport, scenario, args.seconds, args.concurrency, out))
                proc.start()
                row[transport] = out.get()
                proc.join()
            row["mcp_over_http_throughput"] = round(row["mcp"]["req_per_s"] / row["http"]["req_per_s"], 2)
            results["scenarios"][scenario] = row
    results["twin_build_server_filesystem"] = _twin_build_seconds(args.twin_runs)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
