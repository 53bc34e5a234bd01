#!/usr/bin/env python3
"""The open-world pool at full size: Gecko serving every tool at once (2 workers) and tool search over it.

Needs a built pool (`make pool`). Prints one JSON object:

- `pool`: tools, apps and toolkits by source (from the pool's manifest);
- `startup`: time from launch to a healthy server with all workers live, cold (fresh state dir, toolkit cache and
  embedding cache: nothing the server keeps between starts helps) and warm (the caches of the first start), the
  resident memory (RSS, and PSS where the kernel reports it: shared pages divided among the processes that map them)
  of the master and each worker, the search engine the server defaults to, how long the first search (default
  ranking) waited for the index, and the first call of a tool of the largest toolkit and of a small one (a pool
  with a prebuilt index loads a toolkit on its first use); the warm start also gives the memory after every search;
- `search`: per ranking (`mode`: bm25, dense, hybrid), for every BFCL single-turn task (seven categories) the user's
  request is the query and the task's own functions the relevant tools: recall@5/10/20 (mean over tasks of the share
  of its functions in the top k), `all@k` (every function in the top k), the same by name (`by_name`: any pool tool
  of the same name counts, as BFCL defines many names several times), and the latency of `GET /tools/search`
  (sequential, one client).

Run: `python perf/pool.py [--pool data/pool] [--skip-cold] [--limit N] [--modes bm25,dense,hybrid]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from benchmarks.bfcl.loader import SingleTurnTask, load_category
from benchmarks.openworld.pool.collect import function_fingerprint
from utils.paths import DATA_DIR
from utils.procs import gecko_server

CATEGORIES = ("simple_python", "multiple", "parallel", "irrelevance", "live_simple", "live_multiple",
              "live_irrelevance")
KS = (5, 10, 20)
MODES = ("bm25", "dense", "hybrid")
FIRST_SEARCH_TIMEOUT = 3600.0  # a cold start embeds the whole pool on the first search (minutes on 2 cores)


def _memory(pid: int) -> dict[str, float]:
    """RSS and PSS (MiB) of one process."""
    out: dict[str, float] = {}
    for name, key in (("status", "VmRSS:"), ("smaps_rollup", "Pss:")):
        try:
            for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
                if line.startswith(key):
                    out["rss_mib" if key == "VmRSS:" else "pss_mib"] = round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
    return out


def _server_memory(url: str) -> dict[str, Any]:
    """Memory of the server's process group (the master and its workers), found from a worker's pid."""
    group = os.getpgid(httpx.get(f"{url}/health", timeout=30).json()["pid"])
    procs: dict[str, dict[str, Any]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == group:
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80]
                    procs[entry] = {"cmd": cmdline, **_memory(int(entry))}
            except (OSError, ProcessLookupError):
                pass
    total = {k: round(sum(p.get(k, 0.0) for p in procs.values()), 1) for k in ("rss_mib", "pss_mib")}
    return {"total": total, "processes": list(procs.values())}


def _start(pool: Path, state_dir: Path, manifest: dict[str, Any], then: Any) -> dict[str, Any]:
    started = time.perf_counter()
    # the embedding and toolkit caches go with the state dir, so that the cold start really starts from nothing
    with gecko_server([pool / "toolkits"], workers=2, state_dir=state_dir, timeout=900,
                      extra=["--search-cache-dir", str(state_dir / "search")],
                      env={"GECKO_TOOLKIT_CACHE_DIR": str(state_dir / "toolkits")}) as url:
        healthy = time.perf_counter() - started
        first = time.perf_counter()
        reply = _search_when_ready(url, {"q": "book a flight", "k": 5})
        figures: dict[str, Any] = {"seconds_to_healthy": round(healthy, 1),
                                   "first_search_seconds": round(time.perf_counter() - first, 2),
                                   "default_engine": reply.json()["engine"],
                                   "dense_unavailable": reply.json().get("dense_unavailable")}
        # every worker builds its own dense index (the others read the cache the first one wrote): wait for all
        ready = time.perf_counter()
        for _ in range(20):
            _search_when_ready(url, {"q": "send an email", "k": 5})
        figures["every_worker_ready_seconds"] = round(time.perf_counter() - ready, 2)
        time.sleep(5)  # let both workers finish building their index before memory is read
        figures["memory"] = _server_memory(url)
        figures["first_call_ms"] = _first_calls(url, manifest)
        if then is not None:
            figures["search"] = then(url)
            figures["memory_after_search"] = _server_memory(url)["total"]
    return figures


def _first_calls(url: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """Time of a first call (empty arguments: answered 422 or 200, after the toolkit is loaded) of the largest
    toolkit and of a one-tool one."""
    sizes: dict[str, list[str]] = defaultdict(list)
    for tool in manifest["tools"]:
        sizes[tool["toolkit"]].append(tool["operation_id"])
    largest = max(sizes, key=lambda name: len(sizes[name]))
    small = min(sizes, key=lambda name: (len(sizes[name]), name))
    found: dict[str, Any] = {}
    session = {"X-Session-ID": httpx.get(f"{url}/session-id", timeout=30).json()["session_id"]}
    for label, name in (("largest", largest), ("small", small)):
        started = time.perf_counter()
        reply = httpx.post(f"{url}/{name}/{sizes[name][0]}", json={}, headers=session, timeout=300)
        found[label] = {"toolkit": name, "tools": len(sizes[name]), "status": reply.status_code,
                        "ms": round((time.perf_counter() - started) * 1000, 1)}
    return found


def _search_when_ready(url: str, params: dict[str, Any], client: httpx.Client | None = None) -> httpx.Response:
    """A search, retried while the server answers 503 (its dense index is being built) after its Retry-After."""
    deadline = time.monotonic() + FIRST_SEARCH_TIMEOUT
    while True:
        reply = (client or httpx).get(f"{url}/tools/search", params=params, timeout=120)
        if reply.status_code != 503 or time.monotonic() > deadline:
            reply.raise_for_status()
            return reply
        time.sleep(min(float(reply.headers.get("Retry-After", "5")), 5.0))


def _tasks(limit: int | None) -> list[tuple[str, str, list[dict[str, Any]]]]:
    tasks = []
    for category in CATEGORIES:
        for task in load_category(category):
            if not isinstance(task, SingleTurnTask):
                continue
            query = "\n".join(m.content for m in task.messages if m.role == "user").strip()
            if query and task.functions:
                tasks.append((task.id, query, list(task.functions)))
    return tasks[:limit] if limit else tasks


def _search_figures(url: str, manifest: dict[str, Any], limit: int | None, mode: str) -> dict[str, Any]:
    by_fingerprint = {t["fingerprint"]: (t["toolkit"], t["operation_id"]) for t in manifest["tools"] if "fingerprint" in t}
    tool_name = {(t["toolkit"], t["operation_id"]): t["name"] for t in manifest["tools"]}
    recall: dict[str, list[float]] = defaultdict(list)
    latencies = []
    missing = 0
    tasks = _tasks(limit)
    with httpx.Client(timeout=60) as client:
        for _, query, functions in tasks:
            wanted = {by_fingerprint.get(function_fingerprint(f)) for f in functions}
            missing += None in wanted
            wanted.discard(None)
            names = {f["name"] for f in functions}
            params: dict[str, Any] = {"q": query[:2000], "k": max(KS), "mode": mode}
            started = time.perf_counter()
            reply = client.get(f"{url}/tools/search", params=params)
            latencies.append((time.perf_counter() - started) * 1000)
            if reply.status_code == 503:  # a worker still building its index: not a latency figure
                latencies.pop()
                reply = _search_when_ready(url, params, client)
            reply.raise_for_status()
            ranked = [(h["toolkit"], h["name"]) for h in reply.json()["hits"]]
            for k in KS:
                top = ranked[:k]
                found = len(wanted & set(top)) / len(wanted) if wanted else 0.0
                found_names = {tool_name.get(t) for t in top} & names
                recall[f"recall@{k}"].append(found)
                recall[f"all@{k}"].append(float(found == 1.0))
                recall[f"by_name_recall@{k}"].append(len(found_names) / len(names))
    latencies.sort()
    return {
        "tasks": len(tasks),
        "tasks_with_a_function_missing_from_the_pool": missing,
        **{key: round(statistics.fmean(values), 4) for key, values in sorted(recall.items())},
        "latency_ms": {"mean": round(statistics.fmean(latencies), 2), "p50": round(latencies[len(latencies) // 2], 2),
                       "p95": round(latencies[int(len(latencies) * 0.95)], 2), "max": round(latencies[-1], 2)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=Path, default=DATA_DIR / "pool")
    parser.add_argument("--skip-cold", action="store_true", help="measure only the warm start")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks (a quick look)")
    parser.add_argument("--modes", default=",".join(MODES), help="rankings to measure, comma-separated")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    manifest_path = args.pool / "manifest.json"
    if not manifest_path.is_file():
        print(f"no pool at {args.pool}: build it with `make pool`", file=sys.stderr)
        return 1
    manifest = json.loads(manifest_path.read_text())
    result: dict[str, Any] = {"pool": {k: v for k, v in manifest["counts"].items()},
                              "prebuilt_index": (args.pool / "toolkits" / ".gecko-index" / "catalogue.json").is_file(),
                              "load_average": os.getloadavg(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="gecko-pool-perf-") as state:
        if not args.skip_cold:
            result["cold_start"] = _start(args.pool, Path(state), manifest, None)
        warm = _start(args.pool, Path(state), manifest,
                      lambda url: {mode: _search_figures(url, manifest, args.limit, mode) for mode in modes})
        result["search"] = warm.pop("search")
        result["warm_start" if not args.skip_cold else "start"] = warm
    result["load_average_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
