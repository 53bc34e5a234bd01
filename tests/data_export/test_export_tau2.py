"""`gecko data export` on a real tau2 run (`gecko tau2`, offline: scripted agent and customer, GATS hybrid
rehearsals in a Gecko started for the run): one row per rehearsal, prompted with the agent's system prompt and the
conversation so far, the domain's tools, tau2's reward as the verdict, flagged as tau2-bench test tasks."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from benchmarks.data_export.cli import main as export_main
from gecko_cli.main import main as gecko_main

pytestmark = pytest.mark.integration


def test_rehearsals_export_with_the_conversation_so_far(tmp_path: Path) -> None:
    assert gecko_main(["tau2", "--domain", "airline", "--num-tasks", "3", "--output-dir", str(tmp_path / "runs"),
                       "--no-progress"]) == 0
    run = next((tmp_path / "runs").iterdir())
    out = tmp_path / "out"
    assert export_main([str(run), "-o", str(out), "--filter", "all", "--validation-fraction", "0"]) == 1  # test tasks
    assert export_main([str(run), "-o", str(out), "--filter", "all", "--validation-fraction", "0",
                        "--allow-test-tasks"]) == 0
    rows = [json.loads(line) for line in (out / "openai" / "train.jsonl").read_text().splitlines()]
    assert len(rows) >= 3
    calls = 0
    for row in rows:
        meta, messages = row["metadata"], row["messages"]
        assert meta["contaminates"] == "tau2-bench" and meta["verdict_source"] == "official"
        assert messages[0]["role"] == "system" and "policy" in messages[0]["content"]
        assert messages[1] == {"role": "assistant", "content": "Hi! How can I help you today?"}
        assert any(m["role"] == "user" for m in messages)
        schemas = {t["function"]["name"]: t["function"]["parameters"] for t in row["tools"]}
        for message in messages:
            for call in message.get("tool_calls") or ():
                jsonschema.validate(json.loads(call["function"]["arguments"]), schemas[call["function"]["name"]])
                calls += 1
    assert calls > 0
    assert "tau2-bench (Sierra Research" in (out / "README.md").read_text()
