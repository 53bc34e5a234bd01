#!/usr/bin/env python3
"""Time to first render of the viewer (`/ui`) in headless Chromium, on a real Gecko (SQLite store, 2 workers).

Builds `--sessions` sessions (labelled `run=perf`; the default, 3,235, is the size of a full BFCL run) and one
session of `--calls` calls (every tenth rejected by the schema, so the timeline shows errors) with history
retention wide enough to keep them all. Then, for each page, loads it `--rounds` times in a fresh browser
context and measures the time from navigation start to the page's "rendered" mark (`<body data-ready=1>`, set
once every section has its data on screen): the sessions list (first page, filtered by label) and the long
session (its whole timeline, fork tree, state and diff). Also reports the API reads behind them. Prints one
JSON object (medians and maxima in milliseconds).

Run: `python perf/viewer_render.py [--sessions 3235] [--calls 1000] [--rounds 5]` (needs Debian's chromium and
the playwright package, both installed by `make setup` / `.ci/run`).
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
from utils.procs import gecko_server

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
    print(json.dumps({"bench": "viewer_render", "sessions": args.sessions + 1, "calls_in_long_session": args.calls,
                      "rounds": args.rounds, "first_render": pages, "api": api,
                      "populate_s": round(populate_s, 1), "chromium": str(binary)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
