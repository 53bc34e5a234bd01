"""Closed-loop HTTP load for performance benchmarks: wrk with a Lua script, or aiohttp pinned to one core.

The wrk script gives each connection (one wrk thread each) its own session id from the argument
list (plus any extra headers), checks every status against the expected one, and prints one JSON line of
totals.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

WRK_SCRIPT = r"""
local threads, count = {}, 0
function setup(thread)
  count = count + 1
  thread:set("tid", count)
  table.insert(threads, thread)
end
function init(args)
  local n = #args - 4
  local sid = args[4 + ((tid - 1) % n) + 1]
  expected, bad, fivexx = tonumber(args[3]), 0, 0
  local headers = {["Content-Type"] = "application/json", ["X-Session-ID"] = sid}
  for name, value in string.gmatch(args[4], "([^\t\n]+)\t([^\n]*)\n") do headers[name] = value end
  req = wrk.format("POST", args[1], headers, args[2])
end
function request() return req end
function response(status, headers, body)
  if status ~= expected then bad = bad + 1 end
  if status >= 500 then fivexx = fivexx + 1 end
end
function done(summary, latency, requests)
  local b, f = 0, 0
  for _, t in ipairs(threads) do b = b + t:get("bad"); f = f + t:get("fivexx") end
  local e = summary.errors
  io.write(string.format('WRK {"requests": %d, "seconds": %.3f, "unexpected_status": %d, "status_5xx": %d, ' ..
    '"socket_errors": %d, "p50_ms": %.2f, "p99_ms": %.2f, "max_ms": %.2f}\n', summary.requests,
    summary.duration / 1e6, b, f, e.connect + e.read + e.write + e.timeout, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
end
"""


def _wrk(url: str, path: str, body: dict, expected: int, sessions: list[str], seconds: float,
         concurrency: int, script: Path, headers: Mapping[str, str]) -> dict:
    extra = "".join(f"{name}\t{value}\n" for name, value in headers.items())
    cmd = ["wrk", "-t", str(concurrency), "-c", str(concurrency), "-d", f"{max(1, round(seconds))}s", "--timeout", "10s",
           "-s", str(script), url, "--", path, json.dumps(body), str(expected), extra, *sessions]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("WRK "))
    result = json.loads(line[4:])
    result["req_per_s"] = round(result["requests"] / result["seconds"], 1)
    return result


async def _aiohttp_drive(url: str, path: str, body: dict, expected: int, sessions: list[str], seconds: float,
                         concurrency: int, extra: Mapping[str, str]) -> dict:
    import aiohttp

    latencies: list[float] = []
    bad = fivexx = 0
    async with aiohttp.ClientSession(base_url=url, connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        deadline = time.perf_counter() + seconds
        payload = json.dumps(body).encode()

        async def worker(index: int) -> None:
            nonlocal bad, fivexx
            headers = {"X-Session-ID": sessions[index % len(sessions)], "Content-Type": "application/json", **extra}
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                async with http.post(path, data=payload, headers=headers) as r:
                    await r.read()
                    bad += r.status != expected
                    fivexx += r.status >= 500
                latencies.append(time.perf_counter() - start)

        started = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed = time.perf_counter() - started
    q = statistics.quantiles(latencies, n=100)
    return {"requests": len(latencies), "seconds": round(elapsed, 3), "unexpected_status": bad, "status_5xx": fivexx,
            "socket_errors": 0, "p50_ms": round(q[49] * 1000, 2), "p99_ms": round(q[98] * 1000, 2),
            "max_ms": round(max(latencies) * 1000, 2), "req_per_s": round(len(latencies) / elapsed, 1)}


def load(url: str, path: str, body: dict, expected: int, sessions: list[str], seconds: float, concurrency: int,
         script: Path | None, headers: Mapping[str, str] | None = None) -> dict:
    """Closed-loop POSTs of `body` for `seconds` on `concurrency` connections; connection i uses `sessions[i % len]`
    (as `X-Session-ID`) and sends `headers` too.

    With `script` (from `wrk_script`): wrk, one thread per connection. Without: aiohttp in this process,
    pinned to one core. Returns requests, req_per_s, p50/p99/max ms, unexpected statuses, 5xx, socket errors.
    """
    if script is not None:
        return _wrk(url, path, body, expected, sessions, seconds, concurrency, script, headers or {})
    cpus = os.cpu_count() or 1
    if hasattr(os, "sched_setaffinity") and cpus > 1:
        os.sched_setaffinity(0, {cpus - 1})  # the generator on one core, as wrk would not be
    return asyncio.run(_aiohttp_drive(url, path, body, expected, sessions, seconds, concurrency, headers or {}))


def wrk_script(directory: Path) -> Path | None:
    """Write the Lua script into `directory` when wrk is installed; None otherwise."""
    if shutil.which("wrk") is None:
        return None
    script = directory / "gecko-load.lua"
    script.write_text(WRK_SCRIPT)
    return script
