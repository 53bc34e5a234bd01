#!/usr/bin/env python3
"""MCP `tools/call` against the HTTP route on the same toolkit and sessions, 2 Gecko workers; and the time to
build the twin of `@modelcontextprotocol/server-filesystem`.

Per scenario (valid write, valid read, invalid call), `--seconds` at `--concurrency` closed-loop connections
after a warm-up, one session per connection: the HTTP route (`POST /notes/{op}`) and MCP (`POST /mcp/notes`,
a JSON-RPC `tools/call`; the session travels as `X-Session-ID`, which the endpoint maps like an
`Mcp-Session-Id`). Same load generator for both (`utils.loadgen`: wrk when installed, else aiohttp pinned to one
core); each scenario's MCP reply is checked once (`isError` as expected) before the load. Besides throughput and
latency, each window reports `cpu_ms_per_request`: the CPU time Gecko's processes (master and workers, from /proc)
spent per request in it. On a shared machine throughput follows how much of the cores the server got in its
window; CPU per request does not, so `mcp_over_http_cpu` compares the two paths on the work each does.
With `--rounds N` the HTTP and MCP windows alternate N times and each transport reports its median window.
Prints one JSON object.

Run: `python perf/mcp_path.py [--seconds 10] [--concurrency 64] [--rounds 3]` (the twin figure needs `make npm-tools`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from utils.loadgen import load, wrk_script
from utils.paths import REPO_ROOT
from utils.procs import gecko_server

TOOLKITS = REPO_ROOT / "tests" / "data" / "openapi"
NPM_BIN = REPO_ROOT / ".npm-tools" / "node_modules" / ".bin"
# name: (tool, arguments, is an error)
SCENARIOS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "valid_write": ("create_note", {"title": "note", "body": "text", "tags": ["work"]}, False),
    "valid_read": ("get_note", {"note_id": "N-123"}, False),
    "invalid": ("create_note", {"body": 1, "tags": ["UP", "UP"], "nope": True}, True),
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


def _server_cpu_seconds() -> float:
    """User + system CPU time of the processes this script started and still runs (the Gecko server and its
    workers; not wrk, which runs per window); 0 without /proc."""
    ticks, total, todo = os.sysconf("SC_CLK_TCK"), 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            children = [int(c) for task in Path(f"/proc/{pid}/task").iterdir()
                        for c in (task / "children").read_text().split()]
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        todo += children
        name, fields = stat.split("(", 1)[1].rsplit(")", 1)
        if pid != os.getpid() and name != "wrk":
            total += int(fields.split()[11]) + int(fields.split()[12])  # utime, stime
    return total / ticks


def _mcp_call(tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def _check_mcp(url: str, session: str, tool: str, arguments: dict, is_error: bool) -> None:
    reply = httpx.post(f"{url}/mcp/notes", json=_mcp_call(tool, arguments), timeout=30,
                       headers={**MCP_HEADERS, "X-Session-ID": session}).json()
    if reply["result"]["isError"] is not is_error:
        raise SystemExit(f"unexpected MCP reply for {tool}: {reply}")


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
            "min_s": round(min(times), 3),
            "command": "python -m gecko.convert mcp --server 'mcp-server-filesystem DIR' -o filesystem.json"}


def _window(url: str, path: str, body: Any, expected: int, sessions: list[str], args: argparse.Namespace,
            script: Path | None, headers: dict[str, str] | None) -> dict:
    """One measured window after a warm-up, with the server's CPU per request in it."""
    load(url, path, body, expected, sessions, args.warmup, args.concurrency, script, headers)
    cpu_before = _server_cpu_seconds()
    window = load(url, path, body, expected, sessions, args.seconds, args.concurrency, script, headers)
    if window["requests"]:
        window["cpu_ms_per_request"] = round((_server_cpu_seconds() - cpu_before) * 1000 / window["requests"], 3)
    return window


def _row(windows: dict[str, list[dict]]) -> dict:
    """Each transport's window of median throughput (of its rounds), and the MCP/HTTP ratios of those."""
    row: dict[str, Any] = {t: sorted(w, key=lambda x: x["req_per_s"])[len(w) // 2] for t, w in windows.items()}
    http, mcp = row["http"], row["mcp"]
    row["mcp_over_http_throughput"] = round(mcp["req_per_s"] / http["req_per_s"], 2)
    row["mcp_over_http_p50"] = round(mcp["p50_ms"] / http["p50_ms"], 2)
    if http.get("cpu_ms_per_request") and mcp.get("cpu_ms_per_request"):
        row["mcp_over_http_cpu"] = round(mcp["cpu_ms_per_request"] / http["cpu_ms_per_request"], 2)
    if len(windows["http"]) > 1:
        row["rounds_throughput_ratio"] = [round(m["req_per_s"] / h["req_per_s"], 2)
                                          for h, m in zip(windows["http"], windows["mcp"])]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--twin-runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternate HTTP and MCP windows this many times per scenario; each transport's figures "
                             "are its median window's (on a shared machine one window meets whatever load is on)")
    args = parser.parse_args()
    results: dict = {"bench": "mcp_path", "workers": args.workers, "concurrency": args.concurrency,
                     "seconds": args.seconds, "load1_at_start": round(os.getloadavg()[0], 2), "scenarios": {}}
    with tempfile.TemporaryDirectory() as tmp, gecko_server([TOOLKITS], workers=args.workers,
                                                            state_dir=Path(tmp)) as url:
        script = wrk_script(Path(tmp))
        results["load_generator"] = "wrk" if script else "aiohttp"
        for name, (tool, arguments, is_error) in SCENARIOS.items():
            sessions = [httpx.get(f"{url}/session-id").json()["session_id"] for _ in range(args.concurrency)]
            _check_mcp(url, sessions[0], tool, arguments, is_error)
            windows: dict[str, list[dict]] = {"http": [], "mcp": []}
            for _ in range(args.rounds):
                for transport, path, body, expected, headers in (
                        ("http", f"/notes/{tool}", arguments, 422 if is_error else 200, None),
                        ("mcp", "/mcp/notes", _mcp_call(tool, arguments), 200, MCP_HEADERS)):
                    windows[transport].append(_window(url, path, body, expected, sessions, args, script, headers))
            results["scenarios"][name] = _row(windows)
    results["twin_build_server_filesystem"] = _twin_build_seconds(args.twin_runs)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
