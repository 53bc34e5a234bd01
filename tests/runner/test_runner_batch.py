"""The shared runner on a scripted benchmark: statuses, checkpoint, resume, preflight, circuit breaker,
interruption, summary and exit codes."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.runner import (
    LedgerEntry,
    PreflightError,
    ResumeError,
    RunInterrupted,
    RunOptions,
    SelectionError,
    read_ledger,
    rescore,
    run_benchmark,
)
from benchmarks.runner.checkpoint import Ledger
from benchmarks.runner.rundir import RunDirectory
from benchmarks.runner.summary import EXIT_INTERRUPTED, EXIT_OK, EXIT_STOPPED, EXIT_UNSCORED, format_table
from tests.runner.runner_support import ScriptedBenchmark
from utils.paths import REPO_ROOT


def _options(tmp_path: Path, **changes: object) -> RunOptions:
    return RunOptions(**{"output_dir": tmp_path / "out", "workers": 2, "progress": False, **changes})


async def test_every_task_ends_done_untested_or_errored_and_one_bug_costs_no_other(tmp_path: Path) -> None:
    bench = ScriptedBenchmark(6, untested=["t1"], raising=["t2"], failing=["t3"])
    summary = await run_benchmark(bench, _options(tmp_path))
    assert sorted(bench.calls) == [f"t{i}" for i in range(6)] and summary.exit_code == EXIT_UNSCORED
    assert [(u.key, u.reason) for u in summary.untested] == [("t1", "Gecko down")]
    assert [(e.key, e.reason) for e in summary.errored] == [("t2", "RuntimeError: bug in t2")]
    even, odd = summary.groups["even"], summary.groups["odd"]
    assert (even.selected, even.done, even.errored, even.score) == (3, 2, 1, 1.0)
    assert (odd.selected, odd.done, odd.untested, odd.score) == (3, 2, 1, 0.5)
    assert (summary.total.done, summary.total.score) == (4, 0.75)
    run_dir = summary.run_dir
    assert run_dir.parent == tmp_path / "out" and run_dir.name.endswith("_scripted_0")
    ledger = read_ledger(run_dir / "tasks.jsonl")
    assert sorted(e.key for e in ledger) == [f"t{i}" for i in range(6)]
    written = json.loads((run_dir / "summary.json").read_text())
    assert written["untested"] == [{"key": "t1", "group": "odd", "reason": "Gecko down"}]
    assert written["evaluation"] == {"records": 4} and written["cost_total"]["calls"] == 4
    assert {row["key"]: row["status"] for row in written["tasks"]}["t2"] == "errored"
    assert "bug in t2" in (run_dir / "run.log").read_text() and "Traceback" in (run_dir / "run.log").read_text()
    even_traces = {t["id"]: t for t in map(json.loads, (run_dir / "traces_even.jsonl").read_text().splitlines())}
    assert even_traces["t2"]["status"] == "errored" and "bug in t2" in even_traces["t2"]["error"]
    config = json.loads((run_dir / "config.json").read_text())
    assert config["benchmark"] == "scripted" and config["config"] == {"count": 6, "seed": 0}
    assert config["environment"]["tasks"] == 6 and config["result_settings"] == ["seed"]
    assert bench.finished == [([f"t{i}" for i in range(6)], True)]
    assert "rerun the untested, errored and pending tasks with: --resume" in format_table(summary)


async def test_resume_reruns_only_what_is_not_done_in_the_same_directory(tmp_path: Path) -> None:
    first = await run_benchmark(ScriptedBenchmark(4, untested=["t1"], raising=["t2"]), _options(tmp_path))
    again = ScriptedBenchmark(6)
    summary = await run_benchmark(again, _options(tmp_path, resume=first.run_dir))
    assert summary.run_dir == first.run_dir and sorted(again.calls) == ["t1", "t2", "t4", "t5"]
    assert (summary.total.skipped, summary.total.done, summary.total.untested) == (2, 4, 0)
    assert first.exit_code == EXIT_UNSCORED and summary.exit_code == EXIT_OK
    assert list((tmp_path / "out").iterdir()) == [first.run_dir]
    config = json.loads((first.run_dir / "config.json").read_text())
    assert len(config["resumes"]) == 1
    assert json.loads((first.run_dir / "official.json").read_text())[0]["key"] == "t0"
    statuses = [(e.key, e.status) for e in read_ledger(first.run_dir / "tasks.jsonl")]
    assert statuses.count(("t1", "done")) == 1 and ("t1", "untested") in statuses


async def test_resume_refuses_other_settings_a_missing_directory_and_another_benchmark(tmp_path: Path) -> None:
    first = await run_benchmark(ScriptedBenchmark(2), _options(tmp_path))
    with pytest.raises(ResumeError, match="seed was 0, now 1"):
        await run_benchmark(ScriptedBenchmark(2, seed=1), _options(tmp_path, resume=first.run_dir))
    with pytest.raises(ResumeError, match="does not exist"):
        await run_benchmark(ScriptedBenchmark(2), _options(tmp_path, resume=tmp_path / "nope"))
    config = json.loads((first.run_dir / "config.json").read_text())
    (first.run_dir / "config.json").write_text(json.dumps({**config, "benchmark": "other"}))
    with pytest.raises(ResumeError, match="it is a `other` run"):
        await run_benchmark(ScriptedBenchmark(2), _options(tmp_path, resume=first.run_dir))


async def test_nothing_is_written_when_the_run_cannot_start(tmp_path: Path) -> None:
    with pytest.raises(PreflightError, match="start Gecko"):
        await run_benchmark(ScriptedBenchmark(2, preflight_error="start Gecko"), _options(tmp_path))
    with pytest.raises(PreflightError, match="not-a-model") as caught:
        await run_benchmark(ScriptedBenchmark(2, models={"planner": "not-a-model"}), _options(tmp_path))
    assert "gpt-4o, " in str(caught.value) and "scripted-oracle" in str(caught.value)  # the offline agents by name
    assert "<name>" not in str(caught.value)
    with pytest.raises(SelectionError, match="count must be"):
        await run_benchmark(ScriptedBenchmark(-1), _options(tmp_path))
    assert not (tmp_path / "out").exists()


async def test_circuit_breaker_stops_a_run_whose_infrastructure_is_down(tmp_path: Path) -> None:
    bench = ScriptedBenchmark(20, untested=[f"t{i}" for i in range(20)])
    summary = await run_benchmark(bench, _options(tmp_path, workers=1, stop_after_untested=3))
    assert len(bench.calls) == 3 and summary.total.pending == 17 and summary.exit_code == EXIT_STOPPED
    assert summary.stopped and "3 tasks in a row were untested" in summary.stopped


async def test_circuit_breaker_is_on_by_default_and_a_done_task_resets_it(tmp_path: Path) -> None:
    down = ScriptedBenchmark(40, untested=[f"t{i}" for i in range(40)])
    summary = await run_benchmark(down, _options(tmp_path, workers=1))
    assert len(down.calls) == RunOptions(output_dir=tmp_path).stop_after_untested == 10
    assert summary.exit_code == EXIT_STOPPED and summary.total.pending == 30
    flaky = ScriptedBenchmark(40, untested=[f"t{i}" for i in range(40) if i % 9])  # 8 in a row at most
    summary = await run_benchmark(flaky, _options(tmp_path, workers=1))
    assert len(flaky.calls) == 40 and summary.exit_code == EXIT_UNSCORED and not summary.stopped


async def test_interrupt_keeps_finished_tasks_and_writes_the_official_files(tmp_path: Path) -> None:
    bench = ScriptedBenchmark(4, slow=["t2", "t3"])
    task = asyncio.ensure_future(run_benchmark(bench, _options(tmp_path)))
    while len(bench.calls) < 4:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(RunInterrupted) as caught:
        await task
    summary = caught.value.summary
    assert summary.interrupted and summary.exit_code == EXIT_INTERRUPTED
    assert (summary.total.done, summary.total.pending) == (2, 2)
    assert bench.finished == [(["t0", "t1"], False)]  # official files from the checkpoint, no scoring
    assert json.loads((summary.run_dir / "summary.json").read_text())["interrupted"] is True


def _traced(run_dir: Path) -> set[str]:
    return {json.loads(line)["id"] for path in run_dir.glob("traces_*.jsonl") for line in path.read_text().splitlines()}


def _done(run_dir: Path) -> set[str]:
    return {key for key, entry in {e.key: e for e in read_ledger(run_dir / "tasks.jsonl")}.items()
            if entry.status == "done"}


@pytest.mark.slow
def test_sigint_to_a_real_runner_mid_task_leaves_every_done_task_with_its_trace(tmp_path: Path) -> None:
    marker, out = tmp_path / "recording", tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tests.runner.slow_disk_run", str(marker), "--count", "6",
                             "--output-dir", str(out), "--no-progress", "--no-cache", "--workers", "2"],
                            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():  # a task is being recorded (its checkpoint append takes a second)
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED, err
    (run_dir,) = out.iterdir()
    done = _done(run_dir)
    assert done and done <= _traced(run_dir)  # the checkpoint never calls done a task whose trace is lost


async def test_resume_reruns_a_done_task_whose_trace_is_missing(tmp_path: Path) -> None:
    first = await run_benchmark(ScriptedBenchmark(4), _options(tmp_path))
    traces = first.run_dir / "traces_odd.jsonl"
    traces.write_text("".join(line + "\n" for line in traces.read_text().splitlines() if '"t3"' not in line))
    ledger = Ledger(first.run_dir / "tasks.jsonl")  # a line from before checkpoints recorded `traced`
    ledger.append(LedgerEntry.model_validate({**ledger.latest()["t1"].model_dump(), "traced": None}))
    ledger.close()
    again = ScriptedBenchmark(4)
    summary = await run_benchmark(again, _options(tmp_path, resume=first.run_dir))
    assert again.calls == ["t3"] and summary.total.done == 1 and summary.total.skipped == 3
    assert _done(first.run_dir) == _traced(first.run_dir) == {"t0", "t1", "t2", "t3"}


async def test_debug_stops_on_the_first_task_that_raises(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="bug in t0"):
        await run_benchmark(ScriptedBenchmark(3, raising=["t0"]), _options(tmp_path, workers=1, debug=True))


async def test_rescore_rebuilds_the_official_files_from_the_checkpoint(tmp_path: Path) -> None:
    first = await run_benchmark(ScriptedBenchmark(3, untested=["t2"]), _options(tmp_path))
    (first.run_dir / "official.json").unlink()
    bench = ScriptedBenchmark(3)
    summary = rescore(bench, RunDirectory(first.run_dir))
    assert [(sorted(keys), complete) for keys, complete in bench.finished] == [(["t0", "t1", "t2"], True)]
    assert (first.run_dir / "official.json").exists()
    assert summary.total.done == 2 and [u.key for u in summary.untested] == ["t2"]
