"""30 % injected faults of every kind: each stage returns only its documented outcomes, never raises otherwise."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from gecko.pipeline.judge.llm import LLMTaskJudge
from gecko.pipeline.stages import ChecklistItem, JudgeFailure, JudgeInput
from gecko.pipeline.state.llm import LLMStateUpdater
from gecko.pipeline.state.rules import RulesStateUpdater
from gecko.pipeline.synthesize.llm import LLMResponseSynthesizer
from gecko.pipeline.synthesize.rules import RulesSynthesizer
from gecko.pipeline.validate.semantic_llm import LLMSemanticValidator
from tests.pipeline.llm.llm_stage_helpers import call_context
from utils.llm_stub import FaultRates, StubConfig
from utils.llm_stub.testing import run_stub, stub_client

CALLS = 40


@pytest.mark.parametrize("backend", ["auto", "raw"])
async def test_every_stage_survives_thirty_percent_faults(notes, backend: str) -> None:
    with run_stub(StubConfig(faults=FaultRates.uniform(0.3), seed=42, retry_after_s=0.5, hang_s=10)) as stub:
        client = stub_client(stub, timeout_s=0.25, max_attempts=3, http_backend=backend)
        model = stub.model()
        semantic = LLMSemanticValidator(client, model)
        synth = LLMResponseSynthesizer(client, model, RulesSynthesizer())
        state = LLMStateUpdater(client, model, RulesStateUpdater())
        judge = LLMTaskJudge(client, model)
        op = notes.operations["create_note"]

        async def one(i: int) -> tuple[str, str | None, str | None, str]:
            ctx = call_context(notes, "create_note", {"title": f"note {i}"}, state={"notes": []})
            verdict = await semantic.check(ctx)
            assert verdict.outcome in ("valid", "unchecked")
            assert verdict.outcome == "valid" or verdict.reason
            synthesis = await synth.synthesize(ctx)
            assert op.response_is_valid(synthesis.body)
            assert synthesis.fallback in (None, "rules")
            change = await state.update(ctx, synthesis.body)
            assert change is not None and isinstance(change.state, dict)
            assert change.fallback in (None, "rules")
            assert ("stub_writes" in change.state) != ("effects" in change.state)
            data = JudgeInput(task=f"Create note {i}", checklist=[ChecklistItem("1", f"note {i} exists")],
                              state=change.state, calls=[], agent_response="done", tools=[])
            try:
                result = await judge.judge(data)
                judged = "success" if result.success else "not-success"
            except JudgeFailure:
                judged = "judge-failure"
            return verdict.outcome, synthesis.fallback, change.fallback, judged

        outcomes = await asyncio.gather(*[one(i) for i in range(CALLS)])
        stats = stub.stats()
        await client.aclose()
    assert set(stats["faults"]) == {"timeout", "rate_limit", "server_error", "malformed", "schema_violation"}
    semantic_outcomes = Counter(o[0] for o in outcomes)
    judged = Counter(o[3] for o in outcomes)
    assert semantic_outcomes["valid"] > CALLS // 2
    assert judged["success"] > CALLS // 2 and set(judged) <= {"success", "judge-failure"}
    fallbacks = sum(1 for o in outcomes if o[1] or o[2])
    failures = semantic_outcomes["unchecked"] + fallbacks + judged["judge-failure"]
    assert failures > 0, "30 % faults must show up as recorded fallbacks or unchecked verdicts"
