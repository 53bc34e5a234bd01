"""`make data` end to end at a tiny scale, offline: seed tools → 3 generated tasks → the scripted select-then-execute
agent with GATS in a Gecko started for the run → export (openai, dpo, hf) → gecko verify on the export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.data_export.recipe import run_recipe
from tests.infra import require_installed

# imported by the test that loads the files (datasets takes seconds to import, at every collection otherwise)
require_installed("datasets", "the `data` extra (make setup installs it): pip install -e '.[data]'")

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_the_recipe_makes_a_verified_clean_dataset(tmp_path: Path) -> None:
    import datasets

    result = run_recipe(tmp_path, count=3, agents=("select-execute",))
    export = tmp_path / "export"
    assert result["verify"]["samples"] == result["export"]["rows"]["kept"] > 0  # no pair: every task passed at once
    assert result["verify"]["verdicts"] == {"valid": result["verify"]["samples"]}
    rows = [json.loads(line) for path in (export / "openai").glob("*.jsonl") for line in path.read_text().splitlines()]
    assert all(r["metadata"]["contaminates"] is None and r["metadata"]["benchmark"] == "openworld" for r in rows)
    assert any(m.get("tool_calls") for r in rows for m in r["messages"])
    assert sum(split.num_rows for split in datasets.load_from_disk(str(export / "hf" / "sft")).values()) == len(rows)
    card = (export / "README.md").read_text()
    assert "No row comes from a benchmark test task" in card
