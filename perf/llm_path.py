#!/usr/bin/env python3
"""The LLM path: 256 sessions making stateful write calls through 2 Gecko workers, LLM stub at 500 ms.

Gecko runs the semantic validator, the responder and the state updater on the stub (judge: rules).
Each session makes --steps sequential write calls; all sessions run at once. Then the same sequence
runs again on fresh sessions with the LLM cache warm: it must make 0 LLM calls and return identical
responses. Prints one JSON object. Run: `python perf/llm_path.py [--sessions 256] [--steps 4] [--llm-http-backend raw|aiohttp|httpx]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from utils.llm_stub.testing import run_stub_process
from utils.procs import gecko_server

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"


def _args(session_index: int, step: int) -> dict:
    return {"title": f"note {session_index}-{step}", "body": f"body of note {step} in session {session_index}",
            "priority": 1 + (session_index + step) % 5, "tags": [("alpha", "beta", "gamma")[step % 3]]}


async def _run(url: str, sessions: int, steps: int) -> tuple[list[float], dict, list[str], float]:
    import aiohttp

    latencies: list[float] = []
    responses: dict[tuple[int, int], str] = {}
    connector = aiohttp.TCPConnector(limit=sessions)
    timeout = aiohttp.ClientTimeout(total=300)
    async with aiohttp.ClientSession(base_url=url, connector=connector, timeout=timeout) as http:
        ids = []
        for _ in range(sessions):
            async with http.get("/session-id") as r:
                ids.append((await r.json())["session_id"])

        async def session(index: int) -> None:
            for step in range(steps):
                start = time.perf_counter()
                async with http.post("/notes/create_note", json=_args(index, step),
                                     headers={"X-Session-ID": ids[index]}) as r:
                    body = await r.text()
                    if r.status != 200:
                        raise RuntimeError(f"HTTP {r.status}: {body[:300]}")
                latencies.append(time.perf_counter() - start)
                responses[(index, step)] = body

        started = time.perf_counter()
        await asyncio.gather(*(session(i) for i in range(sessions)))
        wall = time.perf_counter() - started
    return latencies, responses, ids, wall


def _quantiles(values: list[float]) -> dict:
    q = statistics.quantiles(values, n=100)
    return {"p50_ms": round(q[49] * 1000, 1), "p99_ms": round(q[98] * 1000, 1)}


def _state_tokens(url: str, ids: list[str]) -> dict:
    """Output tokens of each state update against the size of the state it patched (chars/4 ≈ tokens)."""
    out_tokens, state_tokens = [], []
    with httpx.Client(base_url=url, timeout=30) as client:
        for sid in ids[:32]:
            history = client.get(f"/sessions/{sid}/history").json()["calls"]
            for entry in history:
                version = entry.get("state_version", 0) - 1
                before = client.get(f"/sessions/{sid}/state", params={"version": max(version, 0)}).json()["state"]
                for record in entry.get("usage") or []:
                    if record.get("role") == "state":
                        out_tokens.append(record.get("output_tokens") or 0)
                        state_tokens.append(len(json.dumps(before)) // 4 + 1)
    if not out_tokens:
        return {}
    return {"updates_sampled": len(out_tokens), "mean_output_tokens": round(statistics.mean(out_tokens), 1),
            "mean_state_tokens": round(statistics.mean(state_tokens), 1),
            "last_update_output_tokens": out_tokens[-1], "last_update_state_tokens": state_tokens[-1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=256)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--latency-ms", type=int, default=500)
    parser.add_argument("--llm-http-backend", choices=["raw", "aiohttp", "httpx"], default="raw",
                        help="Gecko's LLM connection layer (raw: SDK-free; aiohttp/httpx: under the openai SDK)")
    args = parser.parse_args()
    result: dict = {"bench": "llm_path", "sessions": args.sessions, "steps": args.steps,
                    "stub_latency_ms": args.latency_ms, "workers": 2,
                    "llm_http_backend": args.llm_http_backend}
    with run_stub_process(["--latency-ms", str(args.latency_ms)]) as stub, tempfile.TemporaryDirectory() as state:
        model = stub.model()
        extra = ["--response-model", model, "--state-model", model, "--validation-model", model,
                 "--judge-model", "rules", "--llm-http-backend", args.llm_http_backend]
        with gecko_server([TOOLKITS], workers=2, state_dir=Path(state), extra=extra) as url:
            stub.reset_stats()
            latencies, first, ids, wall = asyncio.run(_run(url, args.sessions, args.steps))
            stats = stub.stats()
            calls = args.sessions * args.steps
            result["run1"] = {"tool_calls": calls, "wall_s": round(wall, 2), "tool_calls_per_s": round(calls / wall, 1),
                              **_quantiles(latencies), "llm_calls": stats["requests"],
                              "llm_calls_per_tool_call": round(stats["requests"] / calls, 2),
                              "llm_calls_by_stage": stats["by_stage"],
                              "critical_path_llm_calls": "2 (semantic check and response, concurrent)"}
            time.sleep(1.0)  # let the last deferred state updates commit before sampling
            result["state_update_tokens"] = _state_tokens(url, ids)
            stub.reset_stats()
            latencies2, second, _, wall2 = asyncio.run(_run(url, args.sessions, args.steps))
            stats2 = stub.stats()
            result["run2_cached"] = {"wall_s": round(wall2, 2), "tool_calls_per_s": round(calls / wall2, 1),
                                     **_quantiles(latencies2), "llm_calls": stats2["requests"],
                                     "identical_responses": first == second}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
