"""The viewer in a real browser: headless Chromium (Debian's `chromium`, which `.ci/run` installs) driven by
Playwright, on a real Gecko (2 workers, SQLite, an API key). A real GATS turn (`gats.run_turn` over HTTP)
makes the sessions: a first attempt whose call is rejected and judged failed, then a second attempt, given the
feedback, that passes. Two BFCL runs (scripted-noisy agent, without and with retries) make a side-by-side run
report. The tests assert on what the pages render and keep one screenshot per page under
`test-artifacts/browser/` (or `$GECKO_TEST_ARTIFACTS/browser/`)."""

from __future__ import annotations

import asyncio
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gats import GatsConfig, TurnInput, run_turn
from inference.agents import AgentRequest, AgentRun, AgentStep
from inference.gecko import GeckoClient, GeckoSandbox, fetch_catalog
from inference.tools import ToolCallRequest, ToolExecutor
from tests.infra import missing, require_module
from utils.browser import CHROMIUM_ARGS, chromium_path
from utils.paths import DATA_DIR, REPO_ROOT
from utils.procs import gecko_server

# The module's fixture runs a benchmark CLI (given up to 300 s) and starts two servers before the first test.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
playwright_api = require_module("playwright.sync_api", "playwright is a test dependency (make setup)")

TOOLKITS = REPO_ROOT / "tests" / "data" / "openapi"
API_KEY = "viewer-test-key"
ARTIFACTS = Path(os.environ.get("GECKO_TEST_ARTIFACTS", REPO_ROOT / "test-artifacts")) / "browser"
TASK = "Write a note to buy milk"
BFCL_TOOLKITS = DATA_DIR / "bfcl" / "openapi" / "single_turn"
BFCL_TASKS = 6


class TwoAttempts:
    """Attempt 0 sends an empty title (rejected by the schema); attempt 1 sends a valid note."""

    name = "two-attempts"

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        title = "" if request.attempt == 0 else "Buy milk"
        record = await tools.execute(ToolCallRequest("c0", self.tool, {"title": title, "body": "2 liters"}), 0)
        return AgentRun(self.name, (AgentStep(0, None, (record,)),), "done", "Noted.", ())

    tool = "create_note"


async def _gats_turn(url: str) -> dict[str, Any]:
    async with GeckoClient(url, api_key=API_KEY) as client:
        base = await client.create_session({"toolkits": ["notes"], "labels": {"run": "browser", "task": "milk"}})
        catalog = await fetch_catalog(client, ["notes"])
        TwoAttempts.tool = next(spec.agent_name for spec in catalog.specs if spec.operation_id == "create_note")
        turn = TurnInput(task=TASK, messages=({"role": "user", "content": TASK},), base_session_id=base.session_id)
        result = await run_turn(turn, TwoAttempts(), GeckoSandbox(client), catalog, GatsConfig(max_retries=2))
        assert [a.status for a in result.attempts] == ["failed", "success"]
        return {"base": base.session_id}


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    browser_binary = chromium_path()
    if browser_binary is None:
        missing("chromium is not installed (CI installs Debian's chromium package)")
    state = tmp_path_factory.mktemp("viewer")
    bfcl = state / "bfcl-toolkits"
    bfcl.mkdir()
    for index in range(BFCL_TASKS):  # a few BFCL tasks for a real run (and its report)
        if (BFCL_TOOLKITS / f"simple_python_{index}.json").exists():
            shutil.copy(BFCL_TOOLKITS / f"simple_python_{index}.json", bfcl)
    with gecko_server([TOOLKITS], workers=2, state_dir=state, log_path=state / "server.log",
                      api_key=API_KEY) as url:
        made = asyncio.run(_gats_turn(url))
        made["runs"], made["bfcl_toolkits"] = state / "runs", bfcl
        with playwright_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(browser_binary), args=list(CHROMIUM_ARGS))
            try:
                yield {"url": url, "browser": browser, **made}
            finally:
                browser.close()


def _page(viewer: dict[str, Any]) -> Any:
    page = viewer["browser"].new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.errors = errors
    return page


def _ready(page: Any) -> None:
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)


def _navigate(page: Any, action: Callable[[], Any]) -> None:
    """Run `action` (a click or a hash change), then wait for the view it leads to: the page's ready mark is cleared
    first, since a hash change is routed after the click returns and the previous view's mark would still be set."""
    page.evaluate("document.body.dataset.ready = ''")
    action()
    _ready(page)


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _sign_in(page: Any, url: str) -> None:
    page.goto(f"{url}/ui")
    page.wait_for_url(f"{url}/ui/login")  # the API key is needed first
    page.fill("input[name=key]", "not the key")
    page.click("button[type=submit]")
    assert "not this server's API key" in page.inner_text("body")
    page.fill("input[name=key]", API_KEY)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/ui")
    _ready(page)
    assert {error.split(": ")[-1] for error in page.errors} == {"the server responded with a status of 401 (Unauthorized)"}
    page.errors.clear()  # the wrong key's answer (Chromium logs it more than once) was the only error


def test_sessions_list_after_sign_in(viewer: dict[str, Any]) -> None:
    page = _page(viewer)
    _sign_in(page, viewer["url"])
    _navigate(page, lambda: page.goto(f"{viewer['url']}/ui#/?label=run%3Dbrowser"))
    rows = page.locator("#sessions tbody tr")
    assert rows.count() == 3  # the turn-start session and one fork per attempt
    text = page.inner_text("#sessions")
    assert "attempt=0" in text and "attempt=1" in text and "run=browser" in text
    statuses = [rows.nth(i).locator(".badge").inner_text() for i in range(3)]
    assert statuses == ["success", "failed", "new"]  # newest first
    _shot(page, "sessions")
    page.select_option("select[name=status]", "failed")
    page.click("#filters button[type=submit]")
    # a locator wait, not wait_for_function: that evaluates a string, which the viewer's CSP (no unsafe-eval) refuses
    playwright_api.expect(page.locator("#sessions tbody tr")).to_have_count(1)
    assert "label=run%3Dbrowser" in page.url and "status=failed" in page.url
    assert "attempt=0" in page.inner_text("#sessions")
    assert page.errors == []


def test_a_gats_turn_failing_then_passing(viewer: dict[str, Any]) -> None:
    page = _page(viewer)
    _sign_in(page, viewer["url"])
    _navigate(page, lambda: page.goto(f"{viewer['url']}/ui#/?label=run%3Dbrowser"))
    _navigate(page, lambda: page.click(f"#sessions tr[data-session='{viewer['base']}'] a"))
    assert not {"null", "undefined", "NaN"} & set(page.inner_text("main").split())
    tree = page.locator("#tree")
    assert tree.locator(".node").count() == 3
    first, second = tree.locator(".node").nth(1), tree.locator(".node").nth(2)
    assert "attempt 0" in first.inner_text() and "failed" in first.inner_text()
    assert "attempt 1" in second.inner_text() and "success" in second.inner_text()
    tree.locator("details.note summary").click()  # the feedback attempt 1 was given
    feedback = tree.locator("details.note pre").inner_text()
    assert "create_note" in feedback and "title" in feedback
    _shot(page, "turn")

    _navigate(page, first.locator("a").click)  # into the failing attempt
    assert page.locator("#facts").inner_text().count("failed") == 1
    call = page.locator("#timeline details.call").first
    assert "422" in call.locator("summary").inner_text()
    call.locator("summary").click()
    body = call.locator(".body").inner_text()
    assert "at least 1 characters" in body and "/title" in body
    judged = page.locator("#timeline details.call[data-tool='#judge']")
    assert "failed" in judged.locator("summary").inner_text()
    assert "failed" in page.locator("#checklist").inner_text()
    _shot(page, "attempt-failed")

    _navigate(page, page.go_back)
    _navigate(page, page.locator("#tree .node").nth(2).locator("a").click)  # the passing attempt
    assert "success" in page.locator("#checklist").inner_text()
    page.wait_for_selector("#diff")
    diff = page.inner_text("#diff")
    assert "add" in diff and "Buy milk" in diff
    _navigate(page, lambda: page.select_option("#version", "0"))
    assert page.locator("#diff").count() == 0 and "Buy milk" not in page.inner_text("#state")
    _shot(page, "attempt-passed")
    assert page.errors == []


@pytest.fixture(scope="module")
def bfcl_runs(viewer: dict[str, Any]) -> tuple[Path, Path]:
    """(the baseline run, the GATS run): BFCL simple_python with the scripted noisy agent, 0 and 2 retries."""
    if not (BFCL_TOOLKITS / "simple_python_0.json").exists():
        missing("BFCL toolkits are not built (make toolkits)")
    runs = viewer["runs"]
    bfcl_state = viewer["runs"].parent / "bfcl-state"
    with gecko_server([viewer["bfcl_toolkits"]], workers=2, state_dir=bfcl_state, extra=["--state-model", "none"],
                      api_key=API_KEY) as bfcl_url:  # BFCL single-turn: no state model
        for retries in ("0", "2"):
            done = subprocess.run(
                [sys.executable, str(REPO_ROOT / "run_bfcl_single.py"), "--category", "simple_python", "--num-tasks",
                 str(BFCL_TASKS), "--model", "scripted-noisy", "--max-retries", retries, "--gecko-url", bfcl_url,
                 "--output-dir", str(runs / retries), "--no-progress"],
                capture_output=True, text=True, cwd=REPO_ROOT, timeout=300,
                env={**os.environ, "GECKO_API_KEY": API_KEY})  # the key never on a command line
            assert done.returncode == 0, done.stderr[-2000:]
            (run_dir,) = (runs / retries).iterdir()
            assert f"report:  {run_dir / 'report.html'}" in done.stdout  # the runner prints where its report is
    (baseline,), (gats,) = (runs / "0").iterdir(), (runs / "2").iterdir()
    return baseline, gats


def test_a_run_report_with_plots(viewer: dict[str, Any], bfcl_runs: tuple[Path, Path]) -> None:
    runs = viewer["runs"]
    baseline, gats = bfcl_runs
    report = runs / "side-by-side.html"
    done = subprocess.run([sys.executable, "-m", "gecko_cli", "report", str(gats), str(baseline), "-o", str(report)],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert done.returncode == 0 and str(report) in done.stdout, done.stderr
    page = _page(viewer)
    page.goto(report.as_uri())
    titles = [t.strip() for t in page.locator("svg .title").all_text_contents()]
    assert {"Accuracy per category", "Task latency (seconds, tasks per bin)"} <= set(titles), titles
    assert any(title.startswith("Accuracy by retry budget") for title in titles)
    accuracy = page.locator("svg").nth(0)
    legend = " ".join(accuracy.locator(".legends").all_text_contents())
    assert gats.name in legend and baseline.name in legend  # two runs side by side
    bars = accuracy.locator("rect.rect")
    assert bars.count() == 2  # one category, one bar per run
    overview = page.locator("table").nth(0).locator("tr")
    shown = [float(overview.nth(i).inner_text().split("\t")[8].rstrip("%")) for i in (1, 2)]
    heights = [bars.nth(i).bounding_box()["height"] for i in (0, 1)]
    assert shown[0] >= shown[1] and heights[0] > 0  # the GATS run scores at least the baseline
    if shown[1] > 0:  # bar heights as drawn follow the accuracies in the table
        assert abs(heights[0] / heights[1] - shown[0] / shown[1]) < 0.05
    budget_rows = page.locator("table").nth(1).locator("tr")
    assert budget_rows.count() == 1 + 3 + 1  # header, 3 budgets of the GATS run, 1 of the baseline
    first, baseline_row = budget_rows.nth(1).inner_text(), budget_rows.nth(4).inner_text()
    assert first.split("\t")[2] == baseline_row.split("\t")[2]  # budget 0 of the GATS run = the baseline run
    _shot(page, "report")
    assert page.errors == []


OVERLAPS = """svg => {
  const boxes = [...svg.querySelectorAll('.legends text, text.title, .axis.y .guides text')]
    .map(t => [t.textContent.trim(), t.getBoundingClientRect()]).filter(([text, r]) => text && r.width > 0);
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, r] = boxes[i], [b, q] = boxes[j];
    const x = Math.min(r.right, q.right) - Math.max(r.left, q.left), y = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
    if (x > 1 && y > 1) out.push(`${a} / ${b}`);
  }
  return out;
}"""
"""The pairs of texts of one plot (legend entries, plot and axis titles, y tick labels) whose boxes overlap."""


def test_a_report_of_several_runs_with_long_names_stays_readable(viewer: dict[str, Any],
                                                                  bfcl_runs: tuple[Path, Path]) -> None:
    baseline, gats = bfcl_runs
    runs = [gats, baseline]
    for name in ("20261127T081500Z_bfcl_openai-compatible_qwen2.5-7b-instruct-q4_k_m_retries2_with_a_long_label",
                 "20261127T091500Z_bfcl_openai-compatible_gemma-3-270m_max-retries-2_second_try_on_the_shared_box"):
        copy = viewer["runs"] / "renamed" / name
        shutil.copytree(gats, copy)
        runs.append(copy)
    report = viewer["runs"] / "four-runs.html"
    done = subprocess.run([sys.executable, "-m", "gecko_cli", "report", *map(str, runs), "-o", str(report)],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    page = _page(viewer)
    page.goto(report.as_uri())
    plots = page.locator("svg")
    for index in range(plots.count()):
        plot = plots.nth(index)
        title = plot.locator("text.title").first.text_content()
        assert plot.evaluate(OVERLAPS) == [], title  # no legend entry, title or tick label over another
        legend = [text.strip() for text in plot.locator(".legends text").all_text_contents()]
        assert not legend or sorted(legend) == sorted(run.name for run in runs), (title, legend)  # whole names
    titles = {text.strip() for text in page.locator("svg text.title").all_text_contents()}
    assert {"Accuracy by retry budget", "Mean latency per task by retry budget"} <= titles  # two plots, not one
    assert {"retries allowed (GATS stopped after k retries)", "accuracy", "seconds per task"} <= titles  # axes
    width = page.viewport_size["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing runs off the page
    table = page.locator("table").nth(0).bounding_box()
    assert table is not None and table["x"] + table["width"] <= width
    _shot(page, "report-four-runs")
    png = (ARTIFACTS / "report-four-runs.png").read_bytes()
    shot_width, shot_height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR
    assert shot_width == width and shot_height > 2000  # no wider than the window; every plot drawn
    assert page.errors == []
