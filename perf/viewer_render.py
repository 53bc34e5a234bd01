#!/usr/bin/env python3
"""Time to first render of the viewer (`/ui`) in headless Chromium, on a real Gecko (SQLite store, 2 workers).

Builds `--sessions` sessions (labelled `run=perf`; the default, 3,235, is the size of a full BFCL run) and one
session of `--calls` calls (every tenth rejected by the schema, so the timeline shows errors) with history
retention wide enough to keep them all. Then, for each page, loads it `--rounds` times in a fresh browser
context and measures the time from navigation start to the page's "rendered" mark (`<body data-ready=1>`, set
once every section has its data on screen): the sessions list (first page, filtered by label) and the long
session (its whole timeline, fork tree, state and diff). Also reports the API reads behind them.

Then the run viewer (`gecko view RUN_DIR`) on a run directory of `--tasks` tasks (default 3,235, a full BFCL
single-turn run; written by this script in the runner's layout: one to three GATS attempts per task with calls,
verdicts and feedback) and times, the same way, the tasks table (facts, every row fetched, filtered, sorted, the
first 500 drawn) and one task's page (attempts side by side), and the JSON behind them. Prints one JSON object
(medians and maxima in milliseconds).

Run: `python perf/viewer_render.py [--sessions 3235] [--calls 1000] [--tasks 3235] [--rounds 5]` (needs Debian's
chromium and the playwright package, both installed by `make setup` / `.ci/run`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from utils.browser import CHROMIUM_ARGS, chromium_path
from utils.procs import gecko_server, run_viewer

TOOLKITS = Path(__file__).resolve().parent.parent / "tests" / "data" / "openapi"


def _populate(url: str, sessions: int, calls: int) -> str:
    """`sessions` labelled sessions and one long one; returns the long session's id."""
    with httpx.Client(base_url=url, timeout=60) as client:
        def make(i: int) -> None:
            client.post("/sessions", json={"config": {"toolkits": ["notes"], "labels": {"run": "perf",
                                                                                         "task": f"t{i}"}}})

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(make, range(sessions)))
        long_id = client.post("/sessions", json={"config": {"toolkits": ["notes"],
                                                             "labels": {"run": "perf", "task": "long"}}}).json()["session_id"]
        headers = {"X-Session-ID": long_id}
        for i in range(calls):
            title = "" if i % 10 == 9 else f"note {i}"
            client.post("/notes/create_note", json={"title": title, "body": f"body {i}"}, headers=headers)
        return long_id


GROUPS = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple")
FEEDBACK = ("Your previous attempt at this request (attempt 1) did not succeed. You start again from the same state "
            "as before it: nothing it did has taken effect.\n\nIts calls and their results:\n1. lookup({...})\n"
            "   -> REJECTED: /city: 'Pari' is not one of the allowed values\n\nFix every problem named above.")


def _attempt(index: int, success: bool, task: int) -> dict:
    call = {"id": f"c{index}", "step": 0, "name": f"tool_{task % 97}", "arguments": {"city": "Paris" if success else
            "Pari", "days": task % 7, "tags": ["a", "b"]}, "ok": success, "status": 200 if success else 422,
            "error_kind": None if success else "validation", "errors": [] if success else [
                {"pointer": "/city", "keyword": "enum", "message": "'Pari' is not one of the allowed values",
                 "source": "syntactic"}], "result": json.dumps({"id": f"r-{task}", "ok": True}), "latency_s": 0.01}
    return {"index": index, "status": "success" if success else "failed", "score": float(success),
            "verdict": {"success": success, "score": float(success), "remaining": [] if success else ["book it"],
                        "engine": "rules"}, "calls": [call], "final_text": "Done.",
            "feedback": FEEDBACK if index else None, "usage_by_role": {"planner": {"input_tokens": 900,
            "output_tokens": 40, "cost_usd": 0.0004}}, "latency_s": {"total": 0.4}}


def _write_run(path: Path, tasks: int) -> str:
    """A finished run directory of `tasks` tasks in the runner's layout; returns a retried task's key."""
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"benchmark": "bfcl", "started_utc": "2026-11-23T08:00:00Z",
                                                  "config": {"model": "perf-model", "max_retries": 2}}))
    traces: dict[str, list[str]] = {g: [] for g in GROUPS}
    with (path / "tasks.jsonl").open("w") as ledger:
        for i in range(tasks):
            group, key = GROUPS[i % len(GROUPS)], f"{GROUPS[i % len(GROUPS)]}_{i}"
            attempts = [_attempt(k, k == i % 3, i) for k in range(i % 3 + 1)]
            ledger.write(json.dumps({"key": key, "group": group, "status": "done", "score": float(i % 5 != 0),
                                     "seconds": 0.5 + i % 3, "usage": [{"role": "planner", "input_tokens": 900,
                                     "output_tokens": 40, "cost_usd": 0.0004}] * len(attempts),
                                     "record": {"id": key, "result": f"[tool_{i % 97}(city='Paris')]"}}) + "\n")
            traces[group].append(json.dumps({"id": key, "best": len(attempts) - 1, "attempts": attempts}))
    for group, lines in traces.items():
        (path / f"traces_{group}.jsonl").write_text("\n".join(lines) + "\n")
    (path / "summary.json").write_text("{}")
    return f"{GROUPS[2]}_2"


def _run_view(tasks: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as root:
        run_dir = Path(root) / "run"
        started = time.perf_counter()
        retried = _write_run(run_dir, tasks)
        write_s = time.perf_counter() - started
        with run_viewer(run_dir) as url, httpx.Client(base_url=url, timeout=60) as client:
            api = {}
            for name, path in (("run", "/run"), ("task", f"/run/tasks/{retried}")):
                samples = []
                for _ in range(rounds + 1):  # the first read parses the files (then cached until they change)
                    t0 = time.perf_counter()
                    client.get(path).raise_for_status()
                    samples.append((time.perf_counter() - t0) * 1000)
                api[name] = {"first_ms": round(samples[0], 1), **_summary(samples[1:])}
            size = len(client.get("/run").content)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(chromium_path()), args=list(CHROMIUM_ARGS))
                try:
                    pages = {"tasks_table": _summary(_render_ms(browser, f"{url}/ui#/", rounds)),
                             "task_attempts": _summary(_render_ms(browser, f"{url}/ui#/t/{retried}", rounds))}
                finally:
                    browser.close()
    return {"tasks": tasks, "first_render": pages, "api": api, "run_json_bytes": size, "write_s": round(write_s, 1)}


def _render_ms(browser, address: str, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(address)
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        times.append(page.evaluate("performance.now()"))
        context.close()
    return times


def _summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(values), 1), "max_ms": round(max(values), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3235)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=3235, help="tasks in the run directory of the run viewer")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    binary = chromium_path()
    if binary is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as state, gecko_server(
            [TOOLKITS], workers=2, state_dir=Path(state),
            extra=["--history-limit", str(max(args.calls, 1000)), "--max-versions", "0"]) as url:
        started = time.perf_counter()
        long_id = _populate(url, args.sessions, args.calls)
        populate_s = time.perf_counter() - started
        with httpx.Client(base_url=url, timeout=60) as client:
            api = {}
            for name, path in (("list", "/sessions?limit=50&label=run%3Dperf"),
                               ("history", f"/sessions/{long_id}/history?limit=1000"),
                               ("tree", f"/sessions/{long_id}/tree")):
                samples = []
                for _ in range(args.rounds):
                    t0 = time.perf_counter()
                    client.get(path).raise_for_status()
                    samples.append((time.perf_counter() - t0) * 1000)
                api[name] = _summary(samples)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(binary), args=list(CHROMIUM_ARGS))
            try:
                pages = {
                    "sessions_list": _summary(_render_ms(browser, f"{url}/ui#/?label=run%3Dperf", args.rounds)),
                    "long_session": _summary(_render_ms(browser, f"{url}/ui#/s/{long_id}", args.rounds)),
                }
            finally:
                browser.close()
    run_view = _run_view(args.tasks, args.rounds)
    print(json.dumps({"bench": "viewer_render", "sessions": args.sessions + 1, "calls_in_long_session": args.calls,
                      "rounds": args.rounds, "first_render": pages, "api": api,
                      "populate_s": round(populate_s, 1), "run_view": run_view, "chromium": str(binary)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
