"""`gecko data export` on a real BFCL run directory (scripted-noisy through GATS on a real Gecko): the files load
with `datasets`, rows follow TRL's conversational SFT and preference schema, every call the rows teach validates
against the tool schema it was offered with, pairs come from GATS's corrections, contamination is flagged and
split by task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchmarks.data_export.cli import data_main
from benchmarks.data_export.cli import main as export_main
from tests.bfcl.bfcl_support import traces
from tests.infra import require_installed

# imported by the test that loads the files (datasets takes seconds to import, at every collection otherwise)
require_installed("datasets", "the `data` extra (make setup installs it): pip install -e '.[data]'")

pytestmark = pytest.mark.integration

ROLES = {"system", "user", "assistant", "tool"}


def export(run: Path, out: Path, *flags: str) -> dict[str, Any]:
    assert export_main([str(run), "-o", str(out), "--allow-test-tasks", *flags]) == 0
    report: dict[str, Any] = json.loads((out / "export_report.json").read_text())
    return report


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def every(out: Path, fmt: str) -> list[dict[str, Any]]:
    return lines(out / fmt / "train.jsonl") + lines(out / fmt / "validation.jsonl")


def check_messages(messages: list[dict[str, Any]]) -> None:
    """TRL's conversational format (role/content messages) with OpenAI tool calls: each call has a name and JSON
    arguments; each tool message answers a call made before it. (Whether a call names an offered tool and fits
    its schema: the next test, for the calls the rows teach; a rejected attempt may misspell one.)"""
    assert isinstance(messages, list) and messages
    called: set[str] = set()
    for message in messages:
        assert message["role"] in ROLES and "content" in message
        assert message["content"] is None or isinstance(message["content"], str)
        for call in message.get("tool_calls") or ():
            assert message["role"] == "assistant" and call["type"] == "function"
            assert isinstance(call["function"]["name"], str)
            json.loads(call["function"]["arguments"])
            called.add(call["id"])
        if message["role"] == "tool":
            assert message["tool_call_id"] in called


def tool_schemas(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    tools = json.loads(row["tools"]) if isinstance(row["tools"], str) else row["tools"]
    return {t["function"]["name"]: t["function"]["parameters"] for t in tools}


def calls(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in messages for c in m.get("tool_calls") or ()]


def invalid(schemas: dict[str, dict[str, Any]], name: str, arguments: Any) -> bool:
    if name not in schemas:
        return True
    return any(True for _ in jsonschema.Draft202012Validator(schemas[name]).iter_errors(arguments))


@pytest.fixture(scope="module")
def full(noisy_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export-full")
    export(noisy_run, out, "--formats", "openai,sharegpt,dpo,hf", "--gats", "all", "--validation-fraction", "0.3")
    return out


def test_files_load_with_datasets_and_follow_trls_schema(full: Path) -> None:
    import datasets

    for fmt in ("openai", "dpo", "sharegpt"):
        loaded = datasets.load_dataset("json", data_files=str(full / fmt / "*.jsonl"), split="train",
                                       cache_dir=str(full / ".cache"))
        assert loaded.num_rows == len(every(full, fmt)) > 0
    for name in ("sft", "dpo"):
        on_disk = datasets.load_from_disk(str(full / "hf" / name))
        assert set(on_disk) == {"train", "validation"}
        parquet = datasets.load_dataset("parquet", data_files=str(full / "parquet" / f"{name}-*.parquet"),
                                        split="train", cache_dir=str(full / ".cache"))
        assert parquet.num_rows == sum(split.num_rows for split in on_disk.values())
        row = on_disk["train"][0]
        assert isinstance(row["tools"], str) and row["contaminates"] == "bfcl"  # TRL json.loads a string column
    for row in every(full, "openai"):
        check_messages(row["messages"])
    for row in every(full, "dpo"):
        check_messages(row["prompt"])
        assert row["prompt"][-1]["role"] == "user"
        for side in ("chosen", "rejected"):
            assert row[side][0]["role"] == "assistant"
            check_messages(row["prompt"] + row[side])
    for row in every(full, "sharegpt"):
        assert {t["from"] for t in row["conversations"]} <= {"human", "gpt", "function_call", "observation"}


def test_every_taught_call_validates_against_the_schema_it_was_offered_with(full: Path) -> None:
    taught = 0
    for row in every(full, "openai"):
        meta = row["metadata"]
        if meta["kind"] == "correction":  # the fix: after Gecko's feedback (the last user message)
            last_user = max(i for i, m in enumerate(row["messages"]) if m["role"] == "user")
            messages = row["messages"][last_user:]
        elif meta["success"]:
            messages = row["messages"]
        else:
            continue
        schemas = tool_schemas(row)
        for name, arguments in calls(messages):
            assert not invalid(schemas, name, arguments), (meta["task_key"], name, arguments)
            taught += 1
    for row in every(full, "dpo"):
        schemas = tool_schemas(row)
        for name, arguments in calls(row["chosen"]):
            assert not invalid(schemas, name, arguments)
            taught += 1
    assert taught > 20


def test_pairs_are_gats_corrections_with_gecko_feedback(noisy_run: Path, full: Path) -> None:
    by_task = traces(noisy_run)
    expected = 0
    for trace in by_task.values():
        best = trace.get("best")
        if trace.get("valid") and isinstance(best, int):
            expected += sum(1 for a in trace["attempts"] if a["index"] < best and a["status"] == "failed")
    report = json.loads((full / "export_report.json").read_text())["report"]["dpo"]
    assert report["candidates"] >= expected > 0
    pairs = every(full, "dpo")
    assert len(pairs) == report["kept"] and len(pairs) <= expected
    for pair in pairs:
        meta = pair["metadata"]
        attempts = {a["index"]: a for a in by_task[meta["task_key"]]["attempts"]}
        assert pair["chosen"] != pair["rejected"] and meta["success"] is True
        assert attempts[meta["attempt"]]["status"] == "success"  # no call of the chosen side was rejected
        assert meta["feedback"] == attempts[meta["rejected_attempt"] + 1]["feedback"]
        assert meta["rejected_reason"]


def test_test_tasks_need_the_flag_and_are_marked(noisy_run: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert data_main(["export", str(noisy_run), "-o", str(tmp_path / "refused")]) == 1
    assert "--allow-test-tasks" in capsys.readouterr().err
    out = tmp_path / "allowed"
    export(noisy_run, out)
    rows = every(out, "openai") + every(out, "dpo")
    assert rows and all(r["metadata"]["contaminates"] == "bfcl" and r["metadata"]["source_task_id"] for r in rows)
    card = (out / "README.md").read_text()
    assert "test tasks" in card and "--allow-test-tasks" in card and "Apache License 2.0" in card


def test_the_split_is_by_task(noisy_run: Path, tmp_path: Path) -> None:
    export(noisy_run, tmp_path, "--gats", "all", "--validation-fraction", "0.5")
    tasks = {split: {r["metadata"]["source_task_id"] for r in lines(tmp_path / "openai" / f"{split}.jsonl")}
             for split in ("train", "validation")}
    assert tasks["train"] and tasks["validation"] and not tasks["train"] & tasks["validation"]


def test_filters_count_what_they_drop(noisy_run: Path, tmp_path: Path) -> None:
    success = export(noisy_run, tmp_path / "s", "--filter", "success")["report"]["sft"]
    failure = export(noisy_run, tmp_path / "f", "--filter", "failure", "--no-near-dedup")["report"]["sft"]
    assert success["candidates"] == failure["candidates"] == sum(1 for _ in traces(noisy_run))
    assert success["dropped"]["failure"] > 0 and failure["dropped"]["success"] == success["kept"] + \
        success["dropped"].get("duplicate", 0) + success["dropped"].get("near_duplicate", 0)
    assert all(not r["metadata"]["success"] for r in every(tmp_path / "f", "openai"))
    first = export(noisy_run, tmp_path / "r", "--first-round", "--gats", "all", "--formats", "openai")
    assert first["report"]["correction"]["dropped"]["not_first_round"] > 0
    for row in every(tmp_path / "r", "openai"):
        assert row["messages"][-1]["role"] == "assistant" and row["metadata"]["first_round"]
        assert sum(1 for m in row["messages"] if m["role"] == "assistant") == 1
    capped = export(noisy_run, tmp_path / "c", "--gats", "all", "--filter", "all", "--max-per-task", "1")
    assert capped["report"]["sft"]["dropped"]["max_per_task"] > 0
    assert len({r["metadata"]["source_task_id"] for r in every(tmp_path / "c", "openai")
                if r["metadata"]["kind"] == "sft"}) == sum(1 for r in every(tmp_path / "c", "openai")
                                                         if r["metadata"]["kind"] == "sft")
    only = export(noisy_run, tmp_path / "m", "--category", "multiple", "--model", "scripted-noisy")
    assert {r["metadata"]["group"] for r in every(tmp_path / "m", "openai")} == {"multiple"}
    assert only["report"]["sft"]["dropped"]["category_not_selected"] > 0


def test_exporting_a_run_twice_drops_the_copies(noisy_run: Path, tmp_path: Path) -> None:
    once = export(noisy_run, tmp_path / "1")["report"]["sft"]["kept"]
    twice = export(noisy_run, tmp_path / "2", str(noisy_run))
    assert twice["report"]["sft"]["kept"] == once
    assert twice["report"]["sft"]["dropped"]["duplicate"] >= once


def test_verified_keeps_only_rows_that_replay_clean(noisy_run: Path, tmp_path: Path) -> None:
    report = export(noisy_run, tmp_path, "--verified", "--gats", "all", "--filter", "all", "--formats", "openai")
    dropped = report["report"]["sft"]["dropped"]
    assert dropped.get("not_verified:invalid_call", 0) > 0  # the noisy agent's rejected attempts
    kept = every(tmp_path, "openai")
    assert kept and all(r["metadata"]["kind"] == "correction" or r["metadata"]["success"] or
                        not any(m["role"] == "tool" and '"error"' in (m["content"] or "")
                                for m in r["messages"]) for r in kept)
