"""The registry and the `gecko` command line: every registered benchmark builds its command line, dispatch,
exit codes, and `gecko score` on a real run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.registry import BENCHMARKS, UnknownBenchmarkError, load_benchmark
from benchmarks.runner import Benchmark, build_parser
from gecko_cli.main import main as gecko_main
from utils.settings import Settings


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_registered_benchmark_loads_and_builds_its_command_line(name: str) -> None:
    command = load_benchmark(name)
    assert command.name == name
    protocol = {member for member in vars(Benchmark) if not member.startswith("_")} - {"name", "needs_gecko"}
    assert not {member for member in protocol if not callable(getattr(command, member, None))}, "Benchmark methods"
    parser = build_parser(command, Settings())
    flags = {flag for action in parser._actions for flag in action.option_strings}
    assert {"--ids", "--ids-file", "--num-tasks", "--output-dir", "--resume", "--workers",
            "--gecko-url", "--gecko-api-key-file", "--no-cache", "--stop-after-untested"} <= flags
    # every benchmark that drives an agent names its model; the fidelity harness replays fixed calls (no agent:
    # its model flags are Gecko's engines)
    assert ("--model" in flags) == (name != "fidelity") and ("--engine" in flags) == (name == "fidelity")
    with pytest.raises(UnknownBenchmarkError, match="registered: bfcl"):
        load_benchmark("nope")


def test_gecko_lists_its_commands_and_refuses_unknown_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert gecko_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"  {name} " in out for name in ("serve", "convert", "score", "report", "toolkits", *BENCHMARKS))
    assert gecko_main(["frobnicate"]) == 2 and "unknown command" in capsys.readouterr().err
    assert gecko_main([]) == 2


def test_gecko_tau2_run_then_score_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tau2", "--domain", "airline", "--ids", "0,1", "--gats-mode", "none", "--output-dir", str(tmp_path),
            "--no-progress", "--no-cache"]
    assert gecko_main(args) == 0
    (run_dir,) = tmp_path.iterdir()
    assert f"report:  {run_dir / 'report.html'}" in capsys.readouterr().out  # the runner writes the report
    assert "<svg" in (run_dir / "report.html").read_text()
    results = run_dir / "results.json"
    assert run_dir.stat().st_mode & 0o777 == 0o700  # the settings' umask (077): private by default
    assert {p.name: p.stat().st_mode & 0o777 for p in run_dir.iterdir() if p.is_file()} == {
        p.name: 0o600 for p in run_dir.iterdir() if p.is_file()}
    before = json.loads(results.read_text())
    results.unlink()
    capsys.readouterr()
    assert gecko_main(["score", str(run_dir)]) == 0
    assert "avg reward 1.000" in capsys.readouterr().out
    assert json.loads(results.read_text())["simulations"] == before["simulations"]
    assert gecko_main(["score", str(tmp_path / "missing")]) == 1
    assert gecko_main(["tau2", "--domain", "airline", "--ids", "nope", "--gats-mode", "none",
                       "--output-dir", str(tmp_path)]) == 1
    assert "tasks not in airline" in capsys.readouterr().err
