#!/usr/bin/env python3
"""Throughput and latency of the rules path against Stoplight Prism 5, same document, same load generator.

Scenarios, each `--seconds` long at `--concurrency` closed-loop connections (after a short warm-up):
(a) invalid call → 422, one session per connection; (b) valid write → 200, one session per
connection; (c) valid read → 200, one session per connection; (d) valid write with every
connection on ONE session (a hot session: an agent's parallel tool calls, GATS attempts on one
base). Gecko runs with `--workers` workers on the SQLite store (or `--store`); Prism (`prism mock -d -v error`:
dynamic mode, no per-request log; installed with npm into `--prism-dir` when node/npm are present) serves the same
OpenAPI document in the same run, and the ratio Gecko/Prism is printed per scenario ((d) is compared
with Prism's (b): Prism keeps no session).

Load generator: `wrk` (Debian package) with a Lua script, one thread per connection so each
connection keeps its own session id; it checks every status. Without wrk: an aiohttp generator in
one process pinned to one core. Prints one JSON object.

Each scenario also reports `cpu_ms_per_request`: the CPU time the server's processes (Gecko's workers,
Prism's node process) spent in the window, per request answered. On a machine shared with other work,
throughput depends on how much of the cores each server got; CPU per request does not, and
`cpu_ratio` (Prism's CPU per request over Gecko's) compares the two on the work each does.

Run: `python perf/rule_path.py [--seconds 15] [--concurrency 64] [--workers 2] [--no-prism]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from utils.loadgen import load, wrk_script
from utils.procs import free_port, gecko_server, redis_server

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"
DOCUMENT = TOOLKITS / "notes.json"
PRISM_VERSION = "5"
# name: (document path, body, expected status, shared session)
SCENARIOS: dict[str, tuple[str, dict[str, Any], int, bool]] = {
    "a_invalid_422": ("/create_note", {"body": 1, "tags": ["UP", "UP"], "nope": True}, 422, False),
    "b_valid_write": ("/create_note", {"title": "note", "body": "text", "tags": ["work"]}, 200, False),
    "c_valid_read": ("/get_note", {"note_id": "N-123"}, 200, False),
    "d_hot_session_write": ("/create_note", {"title": "note", "body": "text", "tags": ["work"]}, 200, True),
}

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
    # `-v error`: Prism logs every request at its default level, which halves its throughput; Gecko runs
    # with --log-level warning, so both are measured without per-request logging.
    proc = subprocess.Popen([str(binary), "mock", "-d", "-v", "error", "-h", "127.0.0.1", "-p", str(port),
                             str(DOCUMENT)],
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


def _tree(root: int) -> list[int]:
    """`root` and its descendants (from /proc)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        for children in Path(f"/proc/{pid}/task").glob("*/children"):
            try:
                todo += [int(c) for c in children.read_text().split()]
            except OSError:
                continue
    return found


def _cpu_seconds(root: int | None) -> float:
    """CPU time (user + system) of `root` and its living descendants; 0 without /proc."""
    if root is None:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in _tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def _socket_inodes(port: int) -> set[str]:
    """Inodes of the sockets listening on `port` (from /proc/net/tcp and tcp6)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def _listener(port: int) -> int | None:
    """The server's main process: the oldest process holding a socket that listens on `port` (its workers share
    the socket and are its descendants), or None. Found by the socket, not the command line: servers bind port 0."""
    wanted = {f"socket:[{inode}]" for inode in _socket_inodes(port)}
    holders = []
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            if any(os.readlink(fd) in wanted for fd in fd_dir.iterdir()):
                holders.append(int(fd_dir.parent.name))
        except OSError:
            continue
    return min(holders) if holders else None


def _run_all(url: str, prefix: str, sessions_for: dict[str, list[str]], args: argparse.Namespace,
             script: Path | None, scenarios: list[str]) -> dict:
    results = {}
    server = _listener(int(url.rsplit(":", 1)[1]))
    for name in scenarios:
        path, body, expected, _ = SCENARIOS[name]
        sessions = sessions_for[name]
        load(url, prefix + path, body, expected, sessions, args.warmup, args.concurrency, script)
        before = _cpu_seconds(server)
        results[name] = load(url, prefix + path, body, expected, sessions, args.seconds, args.concurrency, script)
        if server is not None and results[name]["requests"]:
            spent = _cpu_seconds(server) - before
            results[name]["cpu_ms_per_request"] = round(spent * 1000 / results[name]["requests"], 3)
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
    use_wrk = args.generator != "aiohttp" and shutil.which("wrk") is not None
    out: dict = {"bench": "rule_path", "workers": args.workers, "concurrency": args.concurrency,
                 "seconds": args.seconds, "store": args.store, "generator": "wrk" if use_wrk else "aiohttp-1-core",
                 "load_before": os.getloadavg()[0]}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        script = wrk_script(tmp) if use_wrk else None
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
            ratios, cpu = {}, {}
            for name in scenarios:
                base = out["prism"].get("b_valid_write" if SCENARIOS[name][3] else name)
                if base:
                    ratios[name] = round(out["gecko"][name]["req_per_s"] / base["req_per_s"], 2)
                    if base.get("cpu_ms_per_request") and out["gecko"][name].get("cpu_ms_per_request"):
                        cpu[name] = round(base["cpu_ms_per_request"] / out["gecko"][name]["cpu_ms_per_request"], 2)
            out["gecko_over_prism"] = ratios
            out["cpu_ratio"] = cpu
        elif not args.no_prism:
            out["prism"] = "skipped: node/npm not found"
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
