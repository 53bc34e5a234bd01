#!/usr/bin/env python3
"""Two Gecko hosts on one Redis: throughput of valid writes (scenario (b)) split over both vs one host.

Each host is a Gecko server with `--workers` workers and `--store redis://…`, in its own network
namespace joined by a veth pair when the bench may make namespaces (root + iproute2), else on its
own loopback port. One host gets all `--concurrency` connections; then both hosts get half each,
at the same time (one session per connection in both cases). Both hosts and the load generator share
this machine's cores, so the split shows the cost of the shared store, not the gain of a second
machine. Prints one JSON object.

Run: `python perf/two_hosts.py [--seconds 15] [--concurrency 64] [--workers 1]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import httpx

from utils.loadgen import load, wrk_script
from utils.netns import netns_available, veth_hosts
from utils.procs import gecko_server, redis_server

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"
PATH, BODY = "/notes/create_note", {"title": "note", "body": "text", "tags": ["work"]}


def _sessions(url: str, n: int) -> list[str]:
    with httpx.Client(base_url=url) as http:
        return [http.get("/session-id").json()["session_id"] for _ in range(n)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    out: dict = {"bench": "two_hosts", "workers_per_host": args.workers, "concurrency": args.concurrency,
                 "seconds": args.seconds, "load_before": os.getloadavg()[0]}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        script = wrk_script(tmp)
        out["generator"] = "wrk" if script else "aiohttp-1-core"
        if netns_available():
            hosts = stack.enter_context(veth_hosts(2))
            redis = stack.enter_context(redis_server(bind=tuple(h.gateway for h in hosts)))
            port = redis.rsplit(":", 1)[1]
            urls = [stack.enter_context(gecko_server([TOOLKITS], workers=args.workers, state_dir=tmp / h.name,
                                                     host=h.address, prefix=h.prefix,
                                                     extra=["--store", f"redis://{h.gateway}:{port}"]))
                    for h in hosts]
            out["separation"] = "network namespaces (veth)"
        else:
            redis = stack.enter_context(redis_server())
            urls = [stack.enter_context(gecko_server([TOOLKITS], workers=args.workers, state_dir=tmp / name,
                                                     extra=["--store", redis])) for name in "ab"]
            out["separation"] = "loopback ports (no network namespaces here)"

        half = args.concurrency // 2
        sessions = _sessions(urls[0], args.concurrency)
        load(urls[0], PATH, BODY, 200, sessions, args.warmup, args.concurrency, script)
        out["one_host"] = load(urls[0], PATH, BODY, 200, sessions, args.seconds, args.concurrency, script)

        def drive(index: int) -> dict:
            own = sessions[index * half:(index + 1) * half]
            return load(urls[index], PATH, BODY, 200, own, args.seconds, half, script)

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda i: load(urls[i], PATH, BODY, 200, sessions[i * half:(i + 1) * half],
                                         args.warmup, half, script), range(2)))
            split = list(pool.map(drive, range(2)))
        out["two_hosts"] = {"per_host": split, "req_per_s": round(sum(r["req_per_s"] for r in split), 1),
                            "status_5xx": sum(r["status_5xx"] for r in split),
                            "unexpected_status": sum(r["unexpected_status"] for r in split)}
        out["two_over_one"] = round(out["two_hosts"]["req_per_s"] / out["one_host"]["req_per_s"], 2)
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
