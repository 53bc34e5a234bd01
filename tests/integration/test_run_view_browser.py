"""`gecko view RUN_DIR` in a real browser: headless Chromium (Debian's `chromium`) driven by Playwright, on the
viewer process the command starts (API key set), over real run directories: a BFCL single-turn run of the
scripted-noisy agent with GATS (some tasks fail at the first attempt and pass at the second, one passes Gecko's
judge but fails the official checker) and a BFCL multi-turn one (per-turn attempts and the real execution). The
tests assert on what the pages render and keep one screenshot per page under `test-artifacts/browser/`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.infra import missing, require_module
from tests.integration.test_viewer_browser import ARTIFACTS, _navigate, _page, _ready
from utils.browser import CHROMIUM_ARGS, chromium_path
from utils.paths import DATA_DIR, REPO_ROOT
from utils.procs import gecko_server, run_viewer

# The module's fixture runs two benchmark CLIs (each given up to 600 s) before the first test.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
playwright_api = require_module("playwright.sync_api", "playwright is a test dependency (make setup)")

API_KEY = "run-view-test-key"
SINGLE_TOOLKITS = DATA_DIR / "bfcl" / "openapi" / "single_turn"
MULTI_TOOLKITS = DATA_DIR / "bfcl" / "openapi" / "multi_turn"
SINGLE_IDS = [f"simple_python_{i}" for i in range(6)]
RECOVERED = "simple_python_4"
"""Fails at attempt 0 (the noisy agent misspells the tool), passes at attempt 1 (seed 0)."""
JUDGED_WRONG = "simple_python_2"
"""Passes Gecko's judge at attempt 0, fails the official checker (a wrong value)."""
MULTI_ID = "multi_turn_base_4"


def _run(args: list[str], output: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "gecko_cli", *args, "--output-dir", str(output), "--no-progress"],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "GECKO_API_KEY"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run_dir,) = output.iterdir()
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not (SINGLE_TOOLKITS / f"{RECOVERED}.json").exists() or not MULTI_TOOLKITS.is_dir():
        missing("BFCL toolkits are not built (make toolkits)")
    root = tmp_path_factory.mktemp("run-view")
    toolkits = root / "toolkits"
    toolkits.mkdir()
    for task in SINGLE_IDS:
        shutil.copy(SINGLE_TOOLKITS / f"{task}.json", toolkits)
    with gecko_server([toolkits], workers=1, state_dir=root / "state", extra=["--state-model", "none"]) as url:
        single = _run(["bfcl", "--category", "simple_python", "--ids", *SINGLE_IDS, "--model", "scripted-noisy",
                       "--max-retries", "2", "--gecko-url", url], root / "single")
    multi = _run(["bfcl-multi", "--ids", MULTI_ID, "--model", "scripted-noisy", "--error-rate", "0.5",
                  "--max-retries", "2", "--gecko-url", "auto"], root / "multi")
    return {"single": single, "multi": multi}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    binary = chromium_path()
    if binary is None:
        missing("chromium is not installed (CI installs Debian's chromium package)")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(binary), args=list(CHROMIUM_ARGS))
        try:
            yield launched
        finally:
            launched.close()


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _open(browser: Any, url: str) -> Any:
    page = _page({"browser": browser})
    page.goto(f"{url}/ui")
    page.wait_for_url(f"{url}/ui/login")  # the viewer needs the key, as Gecko's does
    page.fill("input[name=key]", API_KEY)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/ui")
    _ready(page)
    page.errors.clear()  # the unauthenticated first load's 401/303 is the only expected noise
    return page


def test_tasks_table_then_a_task_that_fails_then_passes(browser: Any, runs: dict[str, Path]) -> None:
    with run_viewer(runs["single"], api_key=API_KEY) as url:
        page = _open(browser, url)
        assert runs["single"].name in page.inner_text("#run-facts") and "finished" in page.inner_text("#run-facts")
        rows = page.locator("#tasks tbody tr")
        assert rows.count() == len(SINGLE_IDS)
        assert page.inner_text("#tasks-summary").startswith(f"{len(SINGLE_IDS)} tasks")
        row = page.locator(f"#tasks tr[data-key='{RECOVERED}']").inner_text().split("\t")
        assert row[2] == "done" and row[3] == "1" and row[4] == "2"  # status, score, attempts
        _shot(page, "run-tasks")

        page.select_option("select[name=gats]", "recovered")  # filtered in the page, kept in the URL
        playwright_api.expect(page.locator("#tasks-summary")).not_to_have_text(re.compile(r"^6 tasks"))  # no string eval (CSP)
        keys = [rows.nth(i).get_attribute("data-key") for i in range(rows.count())]
        assert RECOVERED in keys and JUDGED_WRONG not in keys and "gats=recovered" in page.url
        page.select_option("select[name=gats]", "")
        page.click("#tasks th[data-column=attempts]")
        page.click("#tasks th[data-column=attempts]")  # descending
        first = int(rows.nth(0).inner_text().split("\t")[4])
        last = int(rows.nth(rows.count() - 1).inner_text().split("\t")[4])
        assert first == 2 and last == 1 and "sort=attempts" in page.url and "desc=1" in page.url
        page.fill("input[name=q]", RECOVERED)
        playwright_api.expect(rows).to_have_count(1)

        _navigate(page, page.locator(f"#tasks tr[data-key='{RECOVERED}'] a").click)
        assert not {"null", "undefined", "NaN"} & set(page.inner_text("main").split())
        cards = page.locator(".attempts .attempt")
        assert cards.count() == 2
        assert "failed" in cards.nth(0).locator("h3").inner_text() and "rejected" in cards.nth(0).inner_text()
        assert "success" in cards.nth(1).locator("h3").inner_text() and "chosen" in cards.nth(1).inner_text()
        step = page.locator(".attempts .between")
        assert step.count() == 1
        change = step.locator("ul.changes li").first.inner_text()
        assert "solve_quadratic_equationn" in change and "solve_quadratic_equation" in change  # the tool was renamed
        assert "rejected → accepted" in change
        feedback = step.locator("details.feedback pre").inner_text()
        assert "did not succeed" in feedback and "solve_quadratic_equationn" in feedback
        assert "passed" in page.inner_text("#official")
        assert "solve_quadratic_equation" in page.inner_text("#ground-truth")
        assert "solve_quadratic_equation(" in page.inner_text("#answer")
        _shot(page, "run-task-recovered")

        _navigate(page, lambda: page.goto(f"{url}/ui#/t/{JUDGED_WRONG}"))  # the judge said yes, the checker no
        assert "success" in page.locator(".attempt").first.inner_text()
        official = page.inner_text("#official")
        assert "failed" in official and "value_error" in official
        _shot(page, "run-task-official-failure")
        assert page.errors == []


def test_a_multi_turn_task_with_its_real_execution(browser: Any, runs: dict[str, Path]) -> None:
    with run_viewer(runs["multi"], api_key=API_KEY) as url:
        page = _open(browser, url)
        _navigate(page, page.locator(f"#tasks tr[data-key='{MULTI_ID}'] a").click)
        turns = page.locator("section.turn")
        trace = json.loads((runs["multi"] / "traces_multi_turn_base.jsonl").read_text().splitlines()[-1])
        assert turns.count() == len(trace["turns"]) > 1
        retried = [i for i, t in enumerate(trace["turns"]) if len(t["simulated"]["attempts"]) > 1]
        assert retried, "error rate 0.5 makes at least one turn retry"
        turn = turns.nth(retried[0])
        assert turn.locator(".attempt").count() == len(trace["turns"][retried[0]]["simulated"]["attempts"])
        assert turn.locator(".between details.feedback").count() >= 1
        real = turn.locator(".real").inner_text()
        assert "Real execution" in real and trace["turns"][retried[0]]["real"]["calls"][0]["name"] in real
        truth = page.inner_text("#ground-truth")
        assert trace["turns"][0]["real"]["calls"][0]["name"] in truth
        _shot(page, "run-task-multi-turn")
        assert page.errors == []
