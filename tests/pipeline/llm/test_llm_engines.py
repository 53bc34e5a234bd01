"""The engine factory the server calls for LLM roles."""

from __future__ import annotations

import pytest

from gecko.pipeline.judge.llm import LLMTaskJudge
from gecko.pipeline.llm_engines import build_llm_engine
from gecko.pipeline.state.llm import LLMStateUpdater
from gecko.pipeline.state.rules import RulesStateUpdater
from gecko.pipeline.synthesize.llm import LLMResponseSynthesizer
from gecko.pipeline.synthesize.rules import RulesSynthesizer
from gecko.pipeline.validate.semantic_llm import LLMSemanticValidator
from utils.llm import LLMClient, UnknownModelError


def test_builds_each_role(stub, client: LLMClient) -> None:
    model = stub.model()
    assert isinstance(build_llm_engine("validator", model, client), LLMSemanticValidator)
    assert isinstance(build_llm_engine("responder", model, client, fallback=RulesSynthesizer()), LLMResponseSynthesizer)
    assert isinstance(build_llm_engine("state", model, client, fallback=RulesStateUpdater()), LLMStateUpdater)
    judge = build_llm_engine("judge", model, client)
    assert isinstance(judge, LLMTaskJudge) and judge.engine == model


def test_rejects_bad_input(stub, client: LLMClient) -> None:
    with pytest.raises(ValueError, match="fallback"):
        build_llm_engine("responder", stub.model(), client)
    with pytest.raises(ValueError, match="fallback"):
        build_llm_engine("state", stub.model(), client)
    with pytest.raises(ValueError, match="role"):
        build_llm_engine("planner", stub.model(), client)  # type: ignore[arg-type]
    with pytest.raises(UnknownModelError):
        build_llm_engine("judge", "gpt-99", client)


def test_attach_llm_engines_from_settings(stub, tmp_path, monkeypatch) -> None:
    from gecko.pipeline.engines import build_engines
    from gecko.pipeline.llm_engines import llm_usage
    from utils.settings import Settings

    monkeypatch.chdir(tmp_path)
    model = stub.model()
    settings = Settings(state_dir=tmp_path, validation_model=model, response_model=model, state_model=model,
                        judge_model=model)
    engines = build_engines(settings)
    assert isinstance(engines.semantic, LLMSemanticValidator) and isinstance(engines.judge, LLMTaskJudge)
    assert isinstance(engines.synthesizer, LLMResponseSynthesizer) and engines.synthesizer.needs_recent_calls
    assert isinstance(engines.state, LLMStateUpdater)
    assert engines.semantic.client is engines.judge.client
    assert llm_usage(engines) is engines.semantic.client.usage_totals
    assert engines.semantic.client.cache is not None and (tmp_path / "llm_cache.db").exists()
    engines.semantic.client.cache.close()


def test_attach_refuses_missing_keys_at_start_up(tmp_path, monkeypatch) -> None:
    from gecko.pipeline.engines import build_engines
    from utils.llm import MissingAPIKeyError
    from utils.settings import Settings

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        build_engines(Settings(state_dir=tmp_path, response_model="gpt-4o-mini"))
    with pytest.raises(UnknownModelError):
        build_engines(Settings(state_dir=tmp_path, judge_model="gpt-99"))
