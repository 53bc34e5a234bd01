#!/usr/bin/env python3
"""Throughput and latency of the rules path against Stoplight Prism 5, same document, same load generator.

Scenarios, each `--seconds` long at `--concurrency` closed-loop connections (after a short warm-up):
(a) invalid call → 422, one session per connection; (b) valid write → 200, one session per
connection; (c) valid read → 200, one session per connection; (d) valid write with every
connection on ONE session (a hot session: an agent's parallel tool calls, GATS attempts on one
base). Gecko runs with `--workers` workers on the SQLite store (or `--store`); Prism (`prism mock -d`,
dynamic mode, installed with npm into `--prism-dir` when node/npm are present) serves the same
OpenAPI document in the same run, and the ratio Gecko/Prism is printed per scenario ((d) is compared
with Prism's (b): Prism keeps no session).

Load generator: `wrk` (Debian package) with a Lua script, one thread per connection so each
connection keeps its own session id; it checks every status. Without wrk: an aiohttp generator in
one process pinned to one core. Prints one JSON object.

Run: `python bench/rule_path.py [--seconds 15] [--concurrency 64] [--workers 2] [--no-prism]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from utils.procs import free_port, gecko_server, redis_server  # noqa: E402

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"
DOCUMENT = TOOLKITS / "notes.json"
PRISM_VERSION = "5"
# name: (document path, body, expected status, shared session)
SCENARIOS = {
    "a_invalid_422": ("/create_note", {"body": 1, "tags": ["UP", "UP"], "nope": True}, 422, False),
    "b_valid_write": ("/create_note", {"title": "note", "body": "text", "tags": ["work"]}, 200, False),
    "c_valid_read": ("/get_note", {"note_id": "N-123"}, 200, False),
    "d_hot_session_write": ("/create_note", {"title": "note", "body": "text", "tags": ["work"]}, 200, True),
}

WRK_SCRIPT = r"""
local threads, count = {}, 0
function setup(thread)
  count = count + 1
  thread:set("tid", count)
  table.insert(threads, thread)
end
function init(args)
  local n = #args - 3
  local sid = args[3 + ((tid - 1) % n) + 1]
  expected, bad, fivexx = tonumber(args[3]), 0, 0
  req = wrk.format("POST", args[1], {["Content-Type"] = "application/json", ["X-Session-ID"] = sid}, args[2])
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
         concurrency: int, script: Path) -> dict:
    cmd = ["wrk", "-t", str(concurrency), "-c", str(concurrency), "-d", f"{max(1, round(seconds))}s", "--timeout", "10s",
           "-s", str(script), url, "--", path, json.dumps(body), str(expected), *sessions]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("WRK "))
    result = json.loads(line[4:])
    result["req_per_s"] = round(result["requests"] / result["seconds"], 1)
    return result


async def _aiohttp_drive(url: str, path: str, body: dict, expected: int, sessions: list[str], seconds: float,
                         concurrency: int) -> dict:
    import aiohttp

    latencies: list[float] = []
    bad = fivexx = 0
    async with aiohttp.ClientSession(base_url=url, connector=aiohttp.TCPConnector(limit=concurrency)) as http:
        deadline = time.perf_counter() + seconds
        payload = json.dumps(body).encode()

        async def worker(index: int) -> None:
            nonlocal bad, fivexx
            headers = {"X-Session-ID": sessions[index % len(sessions)], "Content-Type": "application/json"}
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


def _load(url: str, path: str, body: dict, expected: int, sessions: list[str], seconds: float, concurrency: int,
          script: Path | None) -> dict:
    if script is not None:
        return _wrk(url, path, body, expected, sessions, seconds, concurrency, script)
    if hasattr(os, "sched_setaffinity") and os.cpu_count() and os.cpu_count() > 1:
        os.sched_setaffinity(0, {os.cpu_count() - 1})  # the generator on one core, as wrk would not be
    return asyncio.run(_aiohttp_drive(url, path, body, expected, sessions, seconds, concurrency))


def _ensure_prism(prism_dir: Path) -> Path | None:
    binary = prism_dir / "node_modules" / ".bin" / "prism"
    if binary.exists():
        return binary
    if shutil.which("npm") is None or shutil.which("node") is None:
        return None
    prism_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prism_dir),
                    f"@stoplight/prism-cli@{PRISM_VERSION}"], check=True, capture_output=True, timeout=600)
    return binary if binary.exists() else None


@contextmanager
def _prism(binary: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([str(binary), "mock", "-d", "-h", "127.0.0.1", "-p", str(port), str(DOCUMENT)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("prism did not start") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _prism_version(binary: Path) -> str:
    return subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout.strip()


def _run_all(url: str, prefix: str, sessions_for: dict[str, list[str]], args: argparse.Namespace,
             script: Path | None, scenarios: list[str]) -> dict:
    results = {}
    for name in scenarios:
        path, body, expected, _ = SCENARIOS[name]
        sessions = sessions_for[name]
        _load(url, prefix + path, body, expected, sessions, args.warmup, args.concurrency, script)
        results[name] = _load(url, prefix + path, body, expected, sessions, args.seconds, args.concurrency, script)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--store", default="sqlite", help="sqlite or redis (a throwaway redis-server)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--no-prism", action="store_true")
    parser.add_argument("--prism-dir", type=Path, default=Path.home() / ".cache" / "gecko-bench" / "prism")
    parser.add_argument("--generator", choices=["auto", "wrk", "aiohttp"], default="auto")
    args = parser.parse_args()
    scenarios = args.scenarios.split(",")
    use_wrk = args.generator == "wrk" or (args.generator == "auto" and shutil.which("wrk"))
    out: dict = {"bench": "rule_path", "workers": args.workers, "concurrency": args.concurrency,
                 "seconds": args.seconds, "store": args.store, "generator": "wrk" if use_wrk else "aiohttp-1-core",
                 "load_before": os.getloadavg()[0]}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        script = None
        if use_wrk:
            script = tmp / "gecko.lua"
            script.write_text(WRK_SCRIPT)
        extra = ["--store", stack.enter_context(redis_server())] if args.store == "redis" else []
        url = stack.enter_context(gecko_server([TOOLKITS], workers=args.workers, state_dir=tmp, extra=extra))
        with httpx.Client(base_url=url) as http:
            own = [http.get("/session-id").json()["session_id"] for _ in range(args.concurrency)]
            shared = [http.get("/session-id").json()["session_id"]]
        sessions_for = {name: shared if SCENARIOS[name][3] else own for name in scenarios}
        out["gecko"] = _run_all(url, "/notes", sessions_for, args, script, scenarios)
        binary = None if args.no_prism else _ensure_prism(args.prism_dir)
        if binary is not None:
            out["prism_version"] = _prism_version(binary)
            prism_url = stack.enter_context(_prism(binary))
            plain = [name for name in scenarios if not SCENARIOS[name][3]]
            out["prism"] = _run_all(prism_url, "", {n: ["-"] for n in plain}, args, script, plain)
            ratios = {}
            for name in scenarios:
                base = out["prism"].get("b_valid_write" if SCENARIOS[name][3] else name)
                if base:
                    ratios[name] = round(out["gecko"][name]["req_per_s"] / base["req_per_s"], 2)
            out["gecko_over_prism"] = ratios
        elif not args.no_prism:
            out["prism"] = "skipped: node/npm not found"
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
