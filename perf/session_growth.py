#!/usr/bin/env python3
"""Per-call cost and storage of one long session: N sequential valid writes (rules engines).

For each store (sqlite, redis) and worker count (1, 2): one session, `--calls` sequential valid
`create_note` writes over keep-alive connections (with 2 workers, alternating between two
connections served by different workers). Reports the mean latency of calls 11–20 and of the last
10 (and the medians of the first and last 500 as steadier figures), the CPU time the workers spent
per call over the first and the last 500 calls (from /proc: the figure that a loaded machine
disturbs least), the state size at the end, and the bytes the session occupies in the store after
1,000 calls and at the end, per call. Retention
is unlimited here (`--history-limit 0 --max-versions 0`), the worst case: bytes per call must stay
constant. Prints one JSON object.

Run: `python perf/session_growth.py [--calls 5000] [--stores sqlite,redis] [--workers 1,2]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from utils.procs import gecko_server, redis_server

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"
UNLIMITED = ["--history-limit", "0", "--max-versions", "0"]


TICKS = os.sysconf("SC_CLK_TCK")
WINDOW = 500


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far (Linux /proc)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def _clients(url: str, workers: int) -> dict[int, httpx.Client]:
    """Keep-alive clients by worker pid, one per worker process (each connection is served by one worker)."""
    clients: dict[int, httpx.Client] = {}
    spare: list[httpx.Client] = []
    for _ in range(50):
        client = httpx.Client(base_url=url, timeout=30)
        pid = client.get("/health").json()["pid"]
        if pid in clients:
            spare.append(client)
        else:
            clients[pid] = client
        if len(clients) == workers:
            break
    for client in spare:
        client.close()
    return clients


def _session_bytes(store: str, url: str | None, state_dir: Path, sid: str) -> int:
    """Bytes the session's rows/keys occupy in the store (payload, not file-system slack)."""
    if store == "sqlite":
        conn = sqlite3.connect(state_dir / "sessions.db")
        total = 0
        for sql in ("SELECT SUM(LENGTH(entry)) + COUNT(entry) * 48 FROM steps WHERE session_id=?",
                    "SELECT SUM(LENGTH(body)) + COUNT(body) * 48 FROM steps WHERE session_id=?",
                    "SELECT LENGTH(config) + LENGTH(checklists) + 64 FROM sessions WHERE id=?"):
            total += conn.execute(sql, (sid,)).fetchone()[0] or 0
        conn.close()
        return int(total)
    import redis

    assert url is not None, "a Redis store needs its URL"
    client = redis.Redis.from_url(url)
    return int(sum(client.memory_usage(f"gecko:{kind}:{sid}", samples=0) or 0 for kind in ("s", "h", "v", "c")))


def _run(store: str, workers: int, calls: int, redis_url: str | None) -> dict:
    with tempfile.TemporaryDirectory() as state:
        extra = list(UNLIMITED)
        if store == "redis":
            assert redis_url is not None, "the Redis store runs only with a Redis server"
            extra += ["--store", redis_url]
        with gecko_server([TOOLKITS], workers=workers, state_dir=Path(state), extra=extra) as url:
            by_pid = _clients(url, workers)
            pids, clients = list(by_pid), list(by_pid.values())
            sid = clients[0].get("/session-id").json()["session_id"]
            latencies: list[float] = []
            cpu: dict[str, float] = {}
            bytes_at_1000 = 0
            window = min(WINDOW, calls // 2)
            for i in range(calls):
                if i in (0, calls - window):
                    cpu["start" if i == 0 else "late"] = _cpu_seconds(pids)
                if i == window:
                    cpu["first"] = _cpu_seconds(pids) - cpu["start"]
                client = clients[i % len(clients)]
                body = {"title": f"note {i}", "body": "text of the note", "tags": ["bench"]}
                start = time.perf_counter()
                r = client.post("/notes/create_note", json=body, headers={"X-Session-ID": sid})
                latencies.append(time.perf_counter() - start)
                if r.status_code != 200:
                    raise RuntimeError(f"call {i}: {r.status_code} {r.text[:200]}")
                if i + 1 == 1000:
                    bytes_at_1000 = _session_bytes(store, redis_url, Path(state), sid)
            cpu["last"] = _cpu_seconds(pids) - cpu["late"]
            final = clients[0].get("/get-session-state", headers={"X-Session-ID": sid}).json()
            bytes_end = _session_bytes(store, redis_url, Path(state), sid)
            for client in clients:
                client.close()
    early, late = latencies[10:20], latencies[-10:]
    ms = lambda xs: round(statistics.mean(xs) * 1000, 3)  # noqa: E731
    return {
        "store": store, "workers": workers, "calls": calls, "final_version": final["version"],
        "calls_11_20_ms": ms(early), "last_10_ms": ms(late), "late_over_early": round(ms(late) / ms(early), 2),
        "first_500_median_ms": round(statistics.median(latencies[:500]) * 1000, 3),
        "last_500_median_ms": round(statistics.median(latencies[-500:]) * 1000, 3),
        f"cpu_ms_per_call_first_{window}": round(cpu["first"] / window * 1000, 3),
        f"cpu_ms_per_call_last_{window}": round(cpu["last"] / window * 1000, 3),
        "cpu_late_over_early": round(cpu["last"] / cpu["first"], 2) if cpu["first"] else None,
        "state_bytes": len(json.dumps(final["state"], separators=(",", ":"))),
        "bytes_per_call_at_1000": round(bytes_at_1000 / 1000),
        f"bytes_per_call_at_{calls}": round(bytes_end / calls),
        "session_bytes": bytes_end,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--stores", default="sqlite,redis")
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    results: dict = {"bench": "session_growth", "calls": args.calls, "runs": []}
    with ExitStack() as stack:
        redis_url = None
        stores = args.stores.split(",")
        if "redis" in stores:
            try:
                redis_url = stack.enter_context(redis_server())
            except FileNotFoundError as exc:
                results["redis_skipped"] = str(exc)
                stores.remove("redis")
        for store in stores:
            for workers in (int(w) for w in args.workers.split(",")):
                results["runs"].append(_run(store, workers, args.calls, redis_url))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
