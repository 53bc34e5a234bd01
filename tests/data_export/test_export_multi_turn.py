"""`gecko data export` on a real BFCL multi-turn run (scripted-noisy, GATS per turn, real execution, sync): one
row per turn whose prompt holds the earlier turns as really executed, and the tools offered at that turn (a
held-out function appears only once released)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchmarks.bfcl.benchmark import BfclMultiTurn
from benchmarks.bfcl.loader import MultiTurnTask, load_category
from benchmarks.bfcl.run_config import MultiTurnRunConfig
from benchmarks.data_export.cli import main as export_main
from benchmarks.runner import RunOptions, run_benchmark
from tests.bfcl.multi_support import multi_turn_gecko

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def multi_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("multi-run")
    with multi_turn_gecko(tmp_path_factory.mktemp("multi-gecko")) as url:
        config = MultiTurnRunConfig(categories=("multi_turn_base", "multi_turn_miss_func"), model="scripted-noisy",
                                    num_tasks=3, max_retries=2, seed=0)
        options = RunOptions(output_dir=out, gecko_url=url, workers=4, progress=False)
        summary = asyncio.run(run_benchmark(BfclMultiTurn(config, options), options))
    return summary.run_dir


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted((out / "openai").glob("*.jsonl"))
            for line in path.read_text().splitlines()]


def test_one_row_per_turn_with_the_real_history_and_the_tools_of_that_turn(multi_run: Path, tmp_path: Path) -> None:
    assert export_main([str(multi_run), "-o", str(tmp_path), "--allow-test-tasks", "--filter", "all",
                        "--no-near-dedup"]) == 0
    rows = _rows(tmp_path)
    tasks: dict[str, MultiTurnTask] = {t.id: t for c in ("multi_turn_base", "multi_turn_miss_func")
                                       for t in load_category(c)[:3] if isinstance(t, MultiTurnTask)}
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_task.setdefault(row["metadata"]["source_task_id"], []).append(row)
    assert set(by_task) == set(tasks)
    history_with_calls = 0
    for task_id, task_rows in by_task.items():
        task = tasks[task_id]
        for row in task_rows:
            turn = row["metadata"]["turn"]
            expected = [m.content for t in task.turns[: turn + 1] for m in t if m.role == "user"]
            positions = [i for i, m in enumerate(row["messages"]) if m["role"] == "user"]
            assert [row["messages"][i]["content"] for i in positions[: len(expected)]] == expected
            offered = {t["function"]["name"] for t in row["tools"]}
            assert len(offered) == len({doc["name"] for doc in task.functions_at_turn(turn)})
            before_turn = row["messages"][: positions[len(expected) - 1]] if expected else []
            history_with_calls += turn > 0 and any(m["role"] == "tool" for m in before_turn)
            if row["metadata"]["success"]:
                schemas = {t["function"]["name"]: t["function"]["parameters"] for t in row["tools"]}
                for message in row["messages"]:
                    for call in message.get("tool_calls") or ():
                        jsonschema.validate(json.loads(call["function"]["arguments"]),
                                            schemas[call["function"]["name"]])
    assert history_with_calls > 0  # later turns start from the earlier turns' real calls and results
    assert any(len(task_rows) > 1 for task_rows in by_task.values())
