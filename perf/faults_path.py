#!/usr/bin/env python3
"""Overhead of the state controller per call, and an exact replay (rules engines, in-process pipeline).

One worker's pipeline (`CallRunner.run`, the same code a request runs after routing) on the SQLite store, the
test toolkit, sequential calls alternating a valid write and a read. Three arms: `none` (no policy: the no-fault
path), `armed` (a 4-rule policy whose rules select calls but never fire: the decision and the controller state
written with every call), `firing` (flaky-network without its delay rule: 20 % of calls answered by an injected
error, which skips the rest of the call). The arms are interleaved call by call (one session each), so load drifts
hit them alike, and each call is timed on its own: the figures are medians of per-call wall and CPU time over
`--rounds` × `--calls` calls. Beside them, the time spent inside the controller itself (policy lookup, decision,
its effects and the controller state it commits; timed around those functions), which noise on a shared machine
does not blur: `controller_us` per call of each arm, and its share of the `none` arm's per-call time (target
< 5 %). Then runs the stale-reads and rate-limited profiles twice over the same calls on fresh sessions and checks
that the injected faults are identical. The three arms run once more over HTTP on a real 1-worker Gecko (SQLite),
where the figure is the server worker's CPU per call (user + system, from /proc).
Prints one JSON object.

Run: `python perf/faults_path.py [--calls 600] [--rounds 5]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from gecko.app import build_context, serving
from gecko.pipeline.faults import FaultPolicies, FaultStep
from gecko.pipeline.runner import CallRunner
from gecko.sessions.service import create_session
from utils.faults import load_policy
from utils.procs import gecko_server
from utils.settings import Settings

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"
ARMED = {"name": "armed", "seed": 1, "rules": [
    {"name": "rare-1", "when": {"probability": 0.0001}, "do": {"kind": "unavailable"}},
    {"name": "rare-2", "when": {"access": "write", "probability": 0.0001}, "do": {"kind": "rate_limit"}},
    {"name": "rare-3", "when": {"tools": ["notes/*"], "probability": 0.0001}, "do": {"kind": "corrupt"}},
    {"name": "late", "when": {"from": 1000000}, "do": {"kind": "timeout"}},
]}
"""Four rules that select calls and draw for them (the full decision cost) but never win at these call counts
(the benchmark reports how many fired: 0 expected)."""


def _firing() -> dict:
    policy = load_policy("flaky-network").public()
    policy["rules"] = [rule for rule in policy["rules"] if rule["do"]["kind"] != "delay"]
    return policy


async def _session_time(ctx, policy: dict | None, calls: int) -> tuple[float, float, list]:
    """(wall seconds per call, CPU seconds per call of this process, the fault record of every call)."""
    config = {"faults": policy} if policy else {}
    record = await create_session(ctx.store, config, {})
    write = ctx.registry.get("notes", "create_note")
    read = ctx.registry.get("notes", "list_notes")
    started, cpu = time.perf_counter(), time.process_time()
    faults = []
    for i in range(calls):
        if i % 2:
            outcome = await ctx.runner.run(record.id, read, {})
        else:
            outcome = await ctx.runner.run(record.id, write, {"title": f"n{i % 7}", "body": "b"})
        faults.append(outcome.fault)
    await ctx.runner.drain()
    return (time.perf_counter() - started) / calls, (time.process_time() - cpu) / calls, faults


def _worker_cpu(pid: int) -> float:
    """CPU seconds (user + system) the process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _http_arms(calls: int, rounds: int, arms: dict[str, dict | None]) -> dict[str, Any]:
    """The same arms over HTTP on a real 1-worker Gecko: the server worker's CPU per call (from /proc)."""
    cpu: dict[str, list[float]] = {name: [] for name in arms}
    wall: dict[str, list[float]] = {name: [] for name in arms}
    with tempfile.TemporaryDirectory() as state_dir, gecko_server([TOOLKITS], workers=1,
                                                                  state_dir=Path(state_dir)) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            pid = http.get("/health").json()["pid"]
            for _ in range(rounds):
                for name, policy in arms.items():
                    sid = http.post("/sessions", json={"config": {"faults": policy} if policy else {}}).json()["session_id"]
                    headers = {"X-Session-ID": sid}
                    started, used = time.perf_counter(), _worker_cpu(pid)
                    for i in range(calls):
                        if i % 2:
                            http.post("/notes/list_notes", headers=headers)
                        else:
                            http.post("/notes/create_note", json={"title": f"n{i % 7}", "body": "b"}, headers=headers)
                    cpu[name].append((_worker_cpu(pid) - used) / calls)
                    wall[name].append((time.perf_counter() - started) / calls)
    cpu_median = {name: statistics.median(values) for name, values in cpu.items()}
    return {"server_cpu_per_call_us": {name: round(v * 1e6, 1) for name, v in cpu_median.items()},
            "wall_per_call_us": {name: round(statistics.median(v) * 1e6, 1) for name, v in wall.items()},
            "armed_cpu_overhead_pct": round(100 * (cpu_median["armed"] / cpu_median["none"] - 1), 2)}


class _ControllerClock:
    """Accumulates the time spent in the controller's functions (patched around them while the arms run)."""

    TIMED = ((FaultPolicies, "policy_for"), (FaultPolicies, "step"), (FaultStep, "commit_config"),
             (FaultStep, "wait"), (FaultStep, "changed_state"), (CallRunner, "_fault_effects"),
             (CallRunner, "_fault_answer"))

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0
        """Nested timed calls (`_fault_effects` calls `commit_config`) are counted once, by the outermost."""
        self._saved: list[tuple[type, str, Any]] = []

    def __enter__(self) -> _ControllerClock:
        for owner, name in self.TIMED:
            original = owner.__dict__[name]
            self._saved.append((owner, name, original))
            func = original.__func__ if isinstance(original, staticmethod) else original
            setattr(owner, name, self._wrap(func, isinstance(original, staticmethod)))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in self._saved:
            setattr(owner, name, original)

    def _start(self) -> float:
        self._depth += 1
        return time.perf_counter()

    def _stop(self, started: float) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - started

    def _wrap(self, func: Any, static: bool) -> Any:
        clock = self
        if asyncio.iscoroutinefunction(func):
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = clock._start()
                try:
                    return await func(*args, **kwargs)
                finally:
                    clock._stop(started)
            return timed_async

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = clock._start()
            try:
                return func(*args, **kwargs)
            finally:
                clock._stop(started)
        return staticmethod(timed) if static else timed


async def _interleaved(ctx, arms: dict[str, dict | None], calls: int) -> dict[str, dict[str, list[float]]]:
    """One session per arm, their calls interleaved; per call: wall and CPU seconds, controller seconds."""
    sessions = {name: (await create_session(ctx.store, {"faults": policy} if policy else {}, {})).id
                for name, policy in arms.items()}
    write = ctx.registry.get("notes", "create_note")
    read = ctx.registry.get("notes", "list_notes")
    out: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": [], "controller": []} for name in arms}
    with _ControllerClock() as clock:
        for i in range(calls):
            for name, sid in sessions.items():
                before, started, cpu = clock.seconds, time.perf_counter(), time.process_time()
                if i % 2:
                    await ctx.runner.run(sid, read, {})
                else:
                    await ctx.runner.run(sid, write, {"title": f"n{i % 7}", "body": "b"})
                out[name]["wall"].append(time.perf_counter() - started)
                out[name]["cpu"].append(time.process_time() - cpu)
                out[name]["controller"].append(clock.seconds - before)
    await ctx.runner.drain()
    return out


def _us(values: list[float]) -> float:
    return round(statistics.median(values) * 1e6, 1)


async def main(calls: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as state_dir:
        settings = Settings(schemas_dirs=[TOOLKITS], store="sqlite", state_dir=Path(state_dir), workers=1)
        ctx = build_context(settings)
        async with serving(ctx):
            arms = {"none": None, "armed": ARMED, "firing": _firing()}
            await _session_time(ctx, None, 50)  # warm-up
            samples: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": [], "controller": []}
                                                          for name in arms}
            for _ in range(rounds):
                for name, measured in (await _interleaved(ctx, arms, calls)).items():
                    for what, values in measured.items():
                        samples[name][what] += values
            armed_fired = 0
            for _ in range(rounds):  # the armed policy never fires (checked on sessions of their own)
                armed_fired += sum(f is not None for f in (await _session_time(ctx, ARMED, calls))[2])
            replays = {}
            for profile in ("stale-reads", "rate-limited"):
                policy = load_policy(profile).public()
                first = (await _session_time(ctx, policy, calls))[2]
                second = (await _session_time(ctx, policy, calls))[2]
                replays[profile] = {"injected": sum(f is not None for f in first), "identical": first == second}
    http = _http_arms(calls, rounds, arms)
    wall = {name: _us(v["wall"]) for name, v in samples.items()}
    cpu = {name: _us(v["cpu"]) for name, v in samples.items()}
    controller = {name: round(statistics.fmean(v["controller"]) * 1e6, 2) for name, v in samples.items()}
    return {
        "benchmark": "faults_path", "store": "sqlite", "in_process": "CallRunner.run, no HTTP", "calls_per_session": calls, "rounds": rounds,
        "per_call_us": wall,
        "cpu_per_call_us": cpu,
        "controller_us": controller,
        "controller_pct_of_call": {name: round(100 * us / wall["none"], 2) for name, us in controller.items()},
        "armed_fired": armed_fired,
        "armed_overhead_pct": round(100 * (wall["armed"] / wall["none"] - 1), 2),
        "armed_cpu_overhead_pct": round(100 * (cpu["armed"] / cpu["none"] - 1), 2),
        "firing_vs_none_pct": round(100 * (wall["firing"] / wall["none"] - 1), 2),
        "http": http,
        "replay": replays,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    json.dump(asyncio.run(main(args.calls, args.rounds)), sys.stdout)
    print()
