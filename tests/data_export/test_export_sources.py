"""Sources besides BFCL single-turn: environment rollouts recorded on a real Gecko (`run_episodes(record=True)`),
and what the export refuses (a directory that is no run, a benchmark with no reader, unknown contamination)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchmarks.data_export.cli import data_main
from benchmarks.data_export.cli import main as export_main
from inference.env import EpisodeSpec, run_episodes, scripted_policy
from inference.gecko.client import GeckoClient

NOTE = {"name": "create_note", "arguments": {"title": "Groceries", "body": "milk"}}
BAD = {"name": "create_note", "arguments": {"title": 7}}


async def _rollouts(url: str, path: Path, **line: Any) -> None:
    specs = [EpisodeSpec(task=f"Create a note titled Groceries ({i})", toolkits=["notes"], id=f"e{i}", max_steps=3)
             for i in range(6)]
    async with GeckoClient(url) as client:
        results = await run_episodes(client, specs, lambda s: scripted_policy(
            [{"tool_calls": [BAD if s.id in ("e1", "e4") else NOTE]}]), record=True)
    path.write_text("".join(json.dumps({**r.__dict__, **line}) + "\n" for r in results))


@pytest.mark.integration
async def test_recorded_rollouts_export_as_conversations(live_gecko: str, tmp_path: Path) -> None:
    rollouts = tmp_path / "rollouts.jsonl"
    await _rollouts(live_gecko, rollouts, contaminates=None, model="scripted")
    first = json.loads(rollouts.read_text().splitlines()[0])
    assert first["messages"][-1]["role"] == "assistant" and first["tools"] and first["calls_ok"] == [True]
    out = tmp_path / "out"
    assert export_main([str(rollouts), "-o", str(out), "--no-near-dedup", "--validation-fraction", "0"]) == 0
    report = json.loads((out / "export_report.json").read_text())["report"]["sft"]
    assert report["candidates"] == 6 and report["kept"] == 4 and report["dropped"] == {"failure": 2}
    rows = [json.loads(line) for line in (out / "openai" / "train.jsonl").read_text().splitlines()]
    for row in rows:
        assert [m["role"] for m in row["messages"]] == ["user", "assistant", "tool", "assistant"]
        schemas = {t["function"]["name"]: t["function"]["parameters"] for t in row["tools"]}
        call = row["messages"][1]["tool_calls"][0]["function"]
        jsonschema.validate(json.loads(call["arguments"]), schemas[call["name"]])
        assert row["metadata"]["benchmark"] == "env" and row["metadata"]["contaminates"] is None


@pytest.mark.integration
async def test_rollouts_without_a_contamination_field_count_as_test_tasks(live_gecko: str, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    rollouts = tmp_path / "rollouts.jsonl"
    await _rollouts(live_gecko, rollouts)
    assert export_main([str(rollouts), "-o", str(tmp_path / "out")]) == 1
    assert "--allow-test-tasks" in capsys.readouterr().err


def test_a_directory_that_is_no_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export_main([str(tmp_path), "-o", str(tmp_path / "out")]) == 1
    assert "is not a run directory" in capsys.readouterr().err


def test_a_benchmark_without_a_reader_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"benchmark": "fidelity", "config": {}}))
    (tmp_path / "tasks.jsonl").write_text("")
    assert export_main([str(tmp_path), "-o", str(tmp_path / "out")]) == 1
    assert "no exporter reads 'fidelity' runs" in capsys.readouterr().err


def test_bad_command_lines_exit_2(tmp_path: Path) -> None:
    assert export_main([str(tmp_path), "-o", str(tmp_path), "--formats", "csv"]) == 2
    assert export_main([str(tmp_path), "-o", str(tmp_path), "--validation-fraction", "1"]) == 2
    assert data_main(["import"]) == 2
