#!/usr/bin/env python3
"""`make demo`: a short offline end-to-end run of Gecko, then of GATS on BFCL.

Part 1: starts the server on the bundled example toolkits (rules engines, no key, no network), creates a
session, makes a valid call, an invalid one (422 problem+json), a read, shows the state and history.

The same session is then used by an MCP client (the official SDK client over streamable HTTP at
`/mcp/orders`, bound with `X-Session-ID`): tools/list, an invalid call (an `isError` result with Gecko's
problem detail) and a valid one.

Part 2: starts Gecko (rules, `--state-model none`) on the BFCL single-turn toolkits of the first 20
simple_python tasks, runs `run_bfcl_single.py --category simple_python --num-tasks 20` with the scripted
noisy agent (seeded errors, no model) at `--max-retries 0` (no GATS) and `--max-retries 2`, and prints
both accuracies (official checker) and what GATS fixed. Gecko's state (sessions, GATS forks with their verdicts
and feedback), those toolkits, both run directories (`runs/`) and their side-by-side `report.html` stay in
`results/demo/`; the demo ends with the commands that show them in the browser (`gecko serve` for `/ui`,
`gecko view` for the GATS run).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from utils.paths import DATA_DIR, EXAMPLE_TOOLKITS_DIR, REPO_ROOT
from utils.procs import gecko_server

BFCL_TOOLKITS = DATA_DIR / "bfcl" / "openapi" / "single_turn"
DEMO_TASKS = 20
DEMO_DIR = REPO_ROOT / "results" / "demo"
"""What the GATS part leaves for the viewer: `toolkits/` and Gecko's `state/` (replaced on every run)."""


def show(title: str, response: httpx.Response) -> None:
    print(f"\n--- {title}: HTTP {response.status_code}")
    print(json.dumps(response.json(), indent=2)[:1500])


async def mcp_demo(url: str, session_id: str) -> None:
    """The same session through an MCP client."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client
    from mcp.types import TextContent

    print(f"\n--- MCP: the official SDK client at {url}/mcp/orders, bound to the session with X-Session-ID")
    async with streamablehttp_client(f"{url}/mcp/orders", headers={"X-Session-ID": session_id}) as streams, \
            ClientSession(streams[0], streams[1]) as mcp:
        await mcp.initialize()
        tools = (await mcp.list_tools()).tools
        print("tools/list: " + ", ".join(f"{t.name} ({'read' if t.annotations and t.annotations.readOnlyHint else 'write'})"
                                         for t in tools))
        bad = await mcp.call_tool("place_order", {"customer_email": "ada", "items": []})
        text = " ".join(part.text for part in bad.content if isinstance(part, TextContent))
        print(f"tools/call place_order (invalid) → isError={bad.isError}: {text}")
        ok = await mcp.call_tool("place_order", {"customer_email": "ada@example.com",
                                                 "items": [{"sku": "XYZ-0001", "quantity": 1}]})
        print(f"tools/call place_order (valid) → isError={ok.isError}: {json.dumps(ok.structuredContent)[:200]}")


def _bfcl_run(url: str, output: Path, retries: int) -> dict:
    cmd = [sys.executable, str(REPO_ROOT / "run_bfcl_single.py"), "--category", "simple_python",
           "--num-tasks", str(DEMO_TASKS), "--model", "scripted-noisy", "--max-retries", str(retries),
           "--gecko-url", url, "--output-dir", str(output), "--no-progress"]
    print("$ " + " ".join(cmd[1:]))
    subprocess.run(cmd, check=True, cwd=REPO_ROOT, stdout=subprocess.DEVNULL)
    (run_dir,) = output.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    traces = [json.loads(line) for line in (run_dir / "traces_simple_python.jsonl").read_text().splitlines()]
    return {"accuracy": summary["evaluation"]["categories"]["simple_python"]["accuracy"], "run_dir": run_dir,
            "traces": sorted(traces, key=lambda t: int(t["id"].rsplit("_", 1)[1]))}


def fixed_table(traces: list[dict[str, Any]]) -> list[str]:
    """One row per error the noisy agent made: task, kind, what it did (whole: a misspelled name is the point),
    what GATS made of it, the attempts and the official verdict; columns as wide as their longest cell; then the
    count by kind."""
    injected: Counter[str] = Counter()
    fixed: Counter[str] = Counter()
    rows = [("task", "kind", "the error", "GATS", "attempts", "official")]
    for trace in traces:
        for error in trace["agent_info"]["corruptions"]:
            injected[error["kind"]] += 1
            fixed[error["kind"]] += error["fixed"]
            verdict = "fixed on retry" if error["fixed"] else "not caught (no schema can see it)"
            rows.append((trace["id"], error["kind"], error["description"], verdict, str(len(trace["attempts"])),
                         "correct" if trace["valid"] else "wrong"))
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.append("\nby kind: " + ", ".join(f"{kind} {fixed[kind]}/{count} fixed"
                                           for kind, count in sorted(injected.items())))
    return lines


def bfcl_demo() -> None:
    """Part 2: GATS on BFCL simple_python with the scripted noisy agent."""
    if not (BFCL_TOOLKITS / "simple_python_0.json").exists():
        print("\nBFCL toolkits not built (make toolkits); skipping the GATS demo.")
        return
    print(f"\n=== GATS on BFCL simple_python (first {DEMO_TASKS} tasks, scripted-noisy agent, no model) ===")
    shutil.rmtree(DEMO_DIR, ignore_errors=True)
    toolkits = DEMO_DIR / "toolkits"
    toolkits.mkdir(parents=True)
    for index in range(DEMO_TASKS):  # only these tasks' toolkits, so Gecko starts in a second
        shutil.copy(BFCL_TOOLKITS / f"simple_python_{index}.json", toolkits)
    print(f"starting Gecko on those {DEMO_TASKS} tasks' toolkits, then two runs of the scripted-noisy agent "
          "(a few seconds each) ...", flush=True)
    with gecko_server([toolkits], workers=2, state_dir=DEMO_DIR / "state", extra=["--state-model", "none"]) as url:
        baseline = _bfcl_run(url, DEMO_DIR / "runs" / "retries0", 0)
        gats = _bfcl_run(url, DEMO_DIR / "runs" / "retries2", 2)
    print(f"\naccuracy without GATS (--max-retries 0): {baseline['accuracy']:.2f}")
    print(f"accuracy with GATS    (--max-retries 2): {gats['accuracy']:.2f}")
    print("\nwhat GATS fixed (each error named by Gecko's feedback is fixed on the retry):")
    print("\n".join(fixed_table(gats["traces"])))
    relative = DEMO_DIR.relative_to(REPO_ROOT)
    print("\nSee every session, GATS attempt, verdict and the feedback between attempts in your browser:\n"
          f"  .venv/bin/gecko serve --schemas-dir {relative}/toolkits --state-dir {relative}/state\n"
          "  then open http://127.0.0.1:8000/ui")
    report = DEMO_DIR / "report.html"
    subprocess.run([sys.executable, "-m", "gecko_cli", "report", str(gats["run_dir"]), str(baseline["run_dir"]), "-o",
                    str(report)], check=True, cwd=REPO_ROOT, stdout=subprocess.DEVNULL)
    print("\nThe GATS run's tasks, each task's attempts side by side with the official verdict and ground truth:\n"
          f"  .venv/bin/gecko view {gats['run_dir'].relative_to(REPO_ROOT)}\n"
          f"and both runs side by side with plots (accuracy by retry budget, cost, latency): "
          f"{report.relative_to(REPO_ROOT)}")


def main() -> int:
    print("=== Gecko on its bundled example toolkits (starting the server: a few seconds) ===", flush=True)
    with tempfile.TemporaryDirectory() as state_dir, gecko_server([EXAMPLE_TOOLKITS_DIR], workers=2,
                                                                   state_dir=Path(state_dir)) as url:
        with httpx.Client(base_url=url, timeout=10) as client:
            health = client.get("/health").json()
            print(f"Gecko at {url}: {health['toolkits']} toolkits, {health['tools']} tools, "
                  f"{health['workers']['live']} workers, engines {json.dumps(health['roles'])}")
            sid = client.get("/session-id").json()["session_id"]
            headers = {"X-Session-ID": sid}
            client.post("/init-session-state", json={"state": {"customer": "ada@example.com"}}, headers=headers)
            show("valid write call orders/place_order", client.post("/orders/place_order", headers=headers, json={
                "customer_email": "ada@example.com", "items": [{"sku": "ABC-1234", "quantity": 2}],
                "shipping": "express"}))
            show("invalid call (wrong email, quantity 0, unknown argument, bad enum)", client.post(
                "/orders/place_order", headers=headers, json={
                    "customer_email": "ada-at-example", "items": [{"sku": "ABC-1234", "quantity": 0}],
                    "gift": True, "shipping": "overnight"}))
            show("read call on the document's own path GET /pets/7", client.get("/pets/7", headers=headers))
            asyncio.run(mcp_demo(url, sid))
            show("session state", client.get("/get-session-state", headers=headers))
            calls = client.get(f"/sessions/{sid}/history").json()["calls"]
            print(f"\n--- history: {len(calls)} entries: " + ", ".join(f"{c['tool']}→{c['status']}" for c in calls))
    print("\nserver stopped.")
    bfcl_demo()
    print("\ndemo done.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
