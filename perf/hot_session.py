#!/usr/bin/env python3
"""A hot session as it grows: throughput of valid writes, all connections on ONE session, window by window.

`perf/rule_path.py`'s scenario (d) gives one figure for a session that grows during the run. This one runs the same
load (`create_note`, `--concurrency` closed-loop connections, wrk when present) in `--windows` consecutive windows
of `--seconds` on one session, so each window starts with the records the earlier ones created: a call whose cost
grows with the session's records shows as throughput falling from window to window. Prints one JSON object: per
window the records at its end, req/s, p99 and 5xx.

Run: `python perf/hot_session.py [--workers 2] [--windows 5] [--seconds 3] [--store sqlite|redis]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import httpx

from utils.loadgen import load, wrk_script
from utils.procs import gecko_server, redis_server

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"
BODY = {"title": "note", "body": "text", "tags": ["work"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--store", default="sqlite", help="sqlite or redis (a throwaway redis-server)")
    args = parser.parse_args()
    out: dict = {"bench": "hot_session", "workers": args.workers, "concurrency": args.concurrency,
                 "store": args.store, "generator": "wrk" if shutil.which("wrk") else "aiohttp-1-core",
                 "load_before": os.getloadavg()[0], "windows": []}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        script = wrk_script(tmp) if shutil.which("wrk") else None
        extra = ["--store", stack.enter_context(redis_server())] if args.store == "redis" else []
        url = stack.enter_context(gecko_server([TOOLKITS], workers=args.workers, state_dir=tmp, extra=extra))
        session = httpx.get(f"{url}/session-id").json()["session_id"]
        records = 0
        for _ in range(args.windows):
            result = load(url, "/notes/create_note", BODY, 200, [session], args.seconds, args.concurrency, script)
            records += result["requests"] - result["unexpected_status"]
            out["windows"].append({"records_after": records, "req_per_s": result["req_per_s"],
                                   "p99_ms": result["p99_ms"], "status_5xx": result["status_5xx"]})
    first, last = out["windows"][0]["req_per_s"], out["windows"][-1]["req_per_s"]
    out["last_over_first"] = round(last / first, 2) if first else None
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
