"""Preflight on `/health`: state model off, and an LLM validator must be the model under test."""

from __future__ import annotations

import pytest

from benchmarks.bfcl.preflight import check_single_turn_health
from benchmarks.runner import PreflightError
from inference.gecko import HealthInfo


def _health(validator: tuple[str, str], state: tuple[str, str] = ("none", "none")) -> HealthInfo:
    return HealthInfo.model_validate({
        "status": "ok", "state_model_enabled": state[1] != "none",
        "roles": {"validator": {"model": validator[0], "engine": validator[1]},
                  "state": {"model": state[0], "engine": state[1]},
                  "responder": {"model": "rules", "engine": "rules"}, "judge": {"model": "rules", "engine": "rules"}},
    })


def test_accepts_rules_and_the_same_llm() -> None:
    check_single_turn_health(_health(("rules", "none")), "scripted-oracle")
    check_single_turn_health(_health(("rules", "none")), "gpt-4o-mini")
    check_single_turn_health(_health(("gpt-4o-mini", "llm")), "gpt-4o-mini")


def test_refuses_a_state_model_and_another_validator() -> None:
    with pytest.raises(PreflightError, match="--state-model none"):
        check_single_turn_health(_health(("rules", "none"), state=("rules", "rules")), "scripted-oracle")
    with pytest.raises(PreflightError, match="--validation-model gpt-4o-mini"):
        check_single_turn_health(_health(("qwen3-8b", "llm")), "gpt-4o-mini")
    with pytest.raises(PreflightError, match="--validation-model rules"):
        check_single_turn_health(_health(("qwen3-8b", "llm")), "scripted-noisy")
