"""With models (the OpenAI-compatible stub over HTTP): semantic rejections, judge verdicts, the LLM cache, and
infrastructure failures reported as untested, never as a verdict on the data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gecko.verify.cli import main
from tests.verify.verify_data import openai_row
from utils.llm_stub import FaultRates, StubConfig
from utils.llm_stub.testing import run_stub


def dataset(tmp_path: Path) -> Path:
    task_fail = openai_row({"city": "Paris"})
    task_fail["messages"][0]["content"] = "Weather in Paris and then book the stub-fail hotel"
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (
        openai_row({"city": "Paris"}), openai_row({"city": "stub-reject"}), task_fail)) + "\n")
    return path


def verify(data: Path, out: Path, model: str, *extra: str) -> list[dict]:
    assert main([str(data), "-o", str(out), "--force", "-j", "1", "--no-progress", "--state-dir", str(data.parent),
                 "--validation-model", model, "--judge-model", model, *extra]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_semantic_and_judge_verdicts_then_a_rerun_costs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = dataset(tmp_path)
    with run_stub(StubConfig()) as stub:
        first = verify(data, tmp_path / "a.jsonl", stub.model())
        requests = stub.stats()["requests"]
        second = verify(data, tmp_path / "b.jsonl", stub.model())
        assert stub.stats()["requests"] == requests  # every LLM call came from the cache
    assert [r["verdict"] for r in first] == ["valid", "invalid_call", "task_failed"]
    assert first[0]["calls"][0]["semantic"] == "valid" and first[0]["judge"]["engine"] != "rules"
    assert first[1]["calls"][0]["errors"][0]["keyword"] == "semantic"
    assert "stub-fail" in first[2]["reason"]
    assert [r["verdict"] for r in second] == [r["verdict"] for r in first]


def test_provider_failures_are_untested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = dataset(tmp_path)
    with run_stub(StubConfig(faults=FaultRates(server_error=1.0), retry_after_s=0)) as stub:
        results = verify(data, tmp_path / "a.jsonl", stub.model(), "--llm-max-attempts", "1", "--no-cache")
    assert {r["verdict"] for r in results} == {"untested"}
    assert all(r["reason"] for r in results)
    assert results[0]["calls"] == [] or results[0]["calls"][0]["semantic"] == "unchecked"
