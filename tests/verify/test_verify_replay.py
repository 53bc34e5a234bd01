"""Replaying samples in fresh sessions: every verdict kind, recorded responses, BFCL alternatives, cleanup."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from gecko.pipeline.engines import build_engines
from gecko.pipeline.stages import SemanticVerdict
from gecko.verify import PERTURBATIONS, Verifier, perturb_sample, read_sample
from gecko.verify.perturb import EXPECTED_ERROR
from tests.verify.verify_data import bfcl_row, openai_row, xlam_row
from utils.settings import Settings


@pytest.fixture
def verifier(tmp_path) -> Verifier:
    return Verifier(build_engines(Settings(state_dir=tmp_path)))


async def verify(verifier: Verifier, row: Any) -> dict[str, Any]:
    return await verifier.verify(read_sample(row if isinstance(row, str) else json.dumps(row), 0))


async def test_valid_sample_with_simulated_response(verifier: Verifier) -> None:
    result = await verify(verifier, openai_row({"city": "Paris", "unit": "c"}))
    assert result["verdict"] == "valid", result
    [call] = result["calls"]
    assert call["status"] == "valid" and call["response_source"] == "simulated" and call["semantic"] == "skipped"
    assert result["judge"]["success"] is True and result["judge"]["engine"] == "rules"


async def test_recorded_result_is_reported_not_simulated(verifier: Verifier) -> None:
    result = await verify(verifier, openai_row({"city": "Paris"}, result='{"temp": 21}'))
    assert result["calls"][0]["response"] == {"temp": 21} and result["calls"][0]["response_source"] == "recorded"


@pytest.mark.parametrize(("row", "kinds"), [
    (openai_row({"city": "Paris", "unit": "kelvin"}), {"enum"}),
    (openai_row({"unit": "c"}), {"required"}),
    (openai_row({"city": 5, "extra": 1}), {"type", "additionalProperties"}),
    (openai_row({"city": "Paris"}, name="get_wether"), {"unknown_tool"}),
    (openai_row('{"city": "Par'), {"arguments_json"}),
    (xlam_row([{"name": "convert_currency", "arguments": {"amount": "ten", "target": "EUR"}}]), {"type"}),
])
async def test_invalid_calls_name_their_error_kinds(verifier: Verifier, row: Any, kinds: set[str]) -> None:
    result = await verify(verifier, row)
    assert result["verdict"] == "invalid_call"
    assert {e["keyword"] for c in result["calls"] for e in c.get("errors", ())} == kinds
    assert "rejected" in result["reason"]


async def test_xlam_valid_with_default_left_out(verifier: Verifier) -> None:
    row = xlam_row([{"name": "convert_currency", "arguments": {"amount": 10, "target": "EUR"}}])
    assert (await verify(verifier, row))["verdict"] == "valid"


async def test_task_failed_when_nothing_was_done(verifier: Verifier) -> None:
    row = openai_row({"city": "Paris"}, answer=None)
    row["messages"] = row["messages"][:1]  # the user asked; no call, no answer
    result = await verify(verifier, row)
    assert result["verdict"] == "task_failed" and result["judge"]["success"] is False
    assert "No tool call and no answer" in result["reason"]


@pytest.mark.parametrize("line", ["{oops", json.dumps(xlam_row([])).replace('"tools": "', '"tools": "x')])
async def test_malformed_samples(verifier: Verifier, line: str) -> None:
    result = await verify(verifier, line)
    assert result["verdict"] == "malformed" and result["reason"] and result["calls"] == []


async def test_unconvertible_tools_are_malformed(verifier: Verifier) -> None:
    row = {"query": "q", "tools": [{"name": "f", "parameters": {"x": "int"}}], "answers": []}
    result = await verify(verifier, row)
    assert result["verdict"] == "malformed" and result["reason"].startswith("tools:")


async def test_bfcl_accepted_alternative_is_replayed_when_the_first_is_invalid(verifier: Verifier) -> None:
    # "N/A" (the doc's default, outside the enum) is listed first; leaving `mode` out is accepted too
    ok = await verify(verifier, bfcl_row([{"math.hypot": {"x": [3], "y": [4], "mode": ["", "N/A"]}}]))
    assert ok["verdict"] == "valid" and ok["calls"][0]["arguments"] == {"x": 3, "y": 4}
    bug = await verify(verifier, bfcl_row([{"math.hypot": {"x": [3], "mode": ["N/A"]}}]))
    assert bug["verdict"] == "invalid_call"
    assert {e["keyword"] for e in bug["calls"][0]["errors"]} == {"required", "enum"}


@pytest.mark.parametrize("kind", sorted(PERTURBATIONS))
async def test_every_perturbation_is_flagged(verifier: Verifier, kind: str) -> None:
    sample = read_sample(json.dumps(bfcl_row([{"math.hypot": {"x": [3], "y": [4], "mode": ["", "exact"]}}])), 0)
    assert (await verifier.verify(sample))["verdict"] == "valid"
    faulty = perturb_sample(sample, kind, verifier.operations(sample), seed=1)
    assert faulty is not None and faulty.id == f"demo_0#{kind}"
    result = await verifier.verify(faulty)
    assert result["verdict"] == "invalid_call"
    assert EXPECTED_ERROR[kind] in {e["keyword"] for c in result["calls"] for e in c.get("errors", ())}
    assert perturb_sample(sample, kind, verifier.operations(sample), seed=1).calls == faulty.calls  # seeded
    assert "response" not in result["calls"][0] or result["calls"][0]["response_source"] == "simulated"


async def test_sessions_are_deleted_and_tools_cached(verifier: Verifier) -> None:
    for _ in range(5):
        await verify(verifier, openai_row({"city": "Paris"}))
    assert await verifier.store.count() == 0
    assert len(verifier._tools) == 1


async def test_a_semantic_check_that_did_not_answer_makes_the_sample_untested(tmp_path) -> None:
    class Silent:
        engine, needs_recent_calls = "silent", False

        async def check(self, ctx: Any) -> SemanticVerdict:
            return SemanticVerdict("unchecked", reason="timeout")

    engines = dataclasses.replace(build_engines(Settings(state_dir=tmp_path)), validation=Silent())
    result = await verify(Verifier(engines), openai_row({"city": "Paris"}))
    assert result["verdict"] == "untested" and "get_weather" in result["reason"]
    assert result["calls"][0]["semantic"] == "unchecked"


async def test_identical_parallel_calls_are_valid_but_the_same_call_in_a_later_message_is_a_repeat(
        verifier: Verifier) -> None:
    truth = [{"math.hypot": {"x": [3], "y": [4]}}, {"math.hypot": {"x": [3], "y": [4]}}]
    assert (await verify(verifier, bfcl_row(truth)))["verdict"] == "valid"  # BFCL parallel_158's shape
    row = openai_row({"city": "Paris"})
    call = row["messages"][1]["tool_calls"][0]
    row["messages"][1]["tool_calls"] = [call, {**call, "id": "c2"}]
    assert (await verify(verifier, row))["verdict"] == "valid"
    row["messages"].insert(2, {"role": "assistant", "content": None, "tool_calls": [{**call, "id": "c3"}]})
    looped = await verify(verifier, row)
    assert looped["verdict"] == "task_failed" and "repeat an earlier identical call" in looped["reason"]
