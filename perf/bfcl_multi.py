#!/usr/bin/env python3
"""BFCL multi-turn through the whole per-turn GATS path (simulated attempts, real execution, sync, official
checker) with the scripted oracle: wall time, Gecko HTTP calls per task (by kind), LLM calls per task.

With `--stub-state N`, a second pass runs N tasks against a Gecko whose state model is the LLM stub and
reports, per `/update-state-from-real` and per simulated write, the state model's output tokens against
the size of the session state (JSON characters).

Prints one JSON object. Run: `python perf/bfcl_multi.py [--tasks 200] [--workers 8] [--stub-state 10]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from benchmarks.bfcl.benchmark import BfclMultiTurn
from benchmarks.bfcl.run_config import MultiTurnRunConfig
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.runner import RunOptions, RunSummary, run_benchmark
from inference.gecko import GeckoClient
from inference.gecko.http_aiohttp import AiohttpTransport
from utils.llm_stub.testing import run_stub
from utils.procs import gecko_server

_KINDS = [("fork", re.compile(r"^/sessions/[^/]+/fork$")), ("judge", re.compile(r"^/sessions/[^/]+/judge$")),
          ("checklist", re.compile(r"^/sessions/[^/]+/checklist$")), ("sync", re.compile(r"^/update-state-from-real$")),
          ("init_state", re.compile(r"^/init-session-state$")), ("session", re.compile(r"^/sessions(/[^/]+)?$")),
          ("toolkit", re.compile(r"^/toolkits")), ("health", re.compile(r"^/health$"))]


class CountingTransport(httpx.AsyncBaseTransport):
    """Counts requests by kind (tool calls are the rest), then forwards them."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.counts: Counter[str] = Counter()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        kind = next((name for name, pattern in _KINDS if pattern.match(path)), "tool_call")
        self.counts[kind] += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _traces(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in run_dir.glob("traces_*.jsonl") for line in f.read_text().splitlines()]


def _llm_calls(traces: list[dict[str, Any]]) -> int:
    """Planner LLM calls recorded in the traces (simulated attempts and real runs)."""
    total = 0
    for trace in traces:
        for turn in trace.get("turns", []):
            for attempt in turn["simulated"]["attempts"]:
                total += int(attempt["usage_by_role"].get("planner", {}).get("calls", 0))
    return total


async def _run(url: str, out: Path, tasks: int, workers: int, *, debug: bool = False,
               client: GeckoClient | None = None) -> RunSummary:
    config = MultiTurnRunConfig(model="scripted-oracle", num_tasks=tasks)
    options = RunOptions(output_dir=out, gecko_url=url, workers=workers, progress=False, debug=debug)
    return await run_benchmark(BfclMultiTurn(config, options), options, gecko=client)


async def _oracle(url: str, out: Path, tasks: int, workers: int) -> dict[str, Any]:
    transport = CountingTransport(AiohttpTransport(workers * 2))
    client = GeckoClient(url, transport=transport, max_connections=workers * 2)
    started = time.perf_counter()
    try:
        summary = await _run(url, out, tasks, workers, client=client)
    finally:
        await client.aclose()
    wall = time.perf_counter() - started
    entry = summary.groups["multi_turn_base"]
    traces = _traces(summary.run_dir)
    turns = sum(len(t.get("turns", [])) for t in traces)
    counted = sum(transport.counts.values()) - transport.counts["health"] - transport.counts["toolkit"]
    return {
        "tasks": entry.done, "turns": turns, "accuracy": entry.score, "untested": entry.untested,
        "wall_s": round(wall, 3), "tasks_per_s": round(entry.done / wall, 2),
        "gecko_calls_per_task": round(counted / max(1, entry.done), 2),
        "gecko_calls_by_kind_per_task": {k: round(v / max(1, entry.done), 2)
                                         for k, v in sorted(transport.counts.items())},
        "llm_calls_per_task": round(_llm_calls(traces) / max(1, entry.done), 2),
    }


async def _state_usage(url: str, out: Path, tasks: int) -> dict[str, Any]:
    report = await _run(url, out, tasks, 2, debug=True)
    rows: list[dict[str, Any]] = []
    async with GeckoClient(url) as client:
        for trace in _traces(report.run_dir):
            session = trace.get("session")
            if not session:
                continue
            state = await client.session_state(session)
            history = await client.full_history(session)
            for call in history:
                for record in call.get("usage") or []:
                    if record.get("role") == "state":
                        rows.append({"tool": call.get("tool"), "output_tokens": int(record.get("output_tokens") or 0),
                                     "state_chars": len(json.dumps(state.state))})
    sync = [r for r in rows if r["tool"] == "#update-state-from-real"]
    return {"tasks": tasks, "state_calls": len(rows), "sync_calls": len(sync),
            "output_tokens_per_state_call": round(sum(r["output_tokens"] for r in rows) / max(1, len(rows)), 1),
            "output_tokens_per_sync_call": round(sum(r["output_tokens"] for r in sync) / max(1, len(sync)), 1),
            "final_state_chars_mean": round(sum(r["state_chars"] for r in rows) / max(1, len(rows)), 1),
            "accuracy": report.groups["multi_turn_base"].score}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--stub-state", type=int, default=0, help="tasks of the stub-state-model pass (0: skip)")
    args = parser.parse_args()
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with gecko_server([OPENAPI_DIR / "multi_turn"], workers=2, state_dir=root / "g1",
                          extra=["--state-model", "rules"]) as url:
            result["oracle_rules"] = asyncio.run(_oracle(url, root / "o1", args.tasks, args.workers))
        if args.stub_state:
            with run_stub() as stub:
                extra = ["--state-model", stub.model(), "--no-cache"]
                with gecko_server([OPENAPI_DIR / "multi_turn"], workers=2, state_dir=root / "g2", extra=extra) as url:
                    result["oracle_stub_state_model"] = asyncio.run(_state_usage(url, root / "o2", args.stub_state))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
