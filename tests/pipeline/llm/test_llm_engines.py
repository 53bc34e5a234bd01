"""The engines the server builds for LLM roles, from the role table and the settings."""

from __future__ import annotations

from typing import Any

import pytest

from gecko.pipeline.engines import build_engines, role_engines
from gecko.pipeline.judge.llm import LLMTaskJudge
from gecko.pipeline.stages import EngineBuild
from gecko.pipeline.state.llm import LLMStateUpdater
from gecko.pipeline.state.rules import RulesStateUpdater
from gecko.pipeline.synthesize.llm import LLMResponseSynthesizer
from gecko.pipeline.synthesize.rules import RulesSynthesizer
from gecko.pipeline.validate.semantic_llm import LLMSemanticValidator
from utils.llm import LLMClient, MissingAPIKeyError, UnknownModelError
from utils.roles import server_role
from utils.settings import Settings


def test_each_role_package_builds_its_llm_engine(stub, client: LLMClient, tmp_path) -> None:
    model, settings = stub.model(), Settings(state_dir=tmp_path)
    expected: dict[str, tuple[type[Any], type]] = {"validation": (LLMSemanticValidator, type(None)), "response": (LLMResponseSynthesizer, RulesSynthesizer),
                "state": (LLMStateUpdater, RulesStateUpdater), "judge": (LLMTaskJudge, object)}
    for name, (llm_type, rules_type) in expected.items():
        role = server_role(name)
        builders = role_engines(role)
        fallback = builders.rules()
        assert isinstance(fallback, rules_type)
        engine = builders.llm(EngineBuild(role=role, model=model, client=client, fallback=fallback,
                                          settings=settings, toolkit_info={}))
        assert isinstance(engine, llm_type) and engine.engine == model
    judge = server_role("judge")
    with pytest.raises(UnknownModelError):
        role_engines(judge).llm(EngineBuild(role=judge, model="gpt-99", client=client, fallback=None,
                                            settings=settings, toolkit_info={}))


def test_build_engines_shares_one_client(stub, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    model = stub.model()
    settings = Settings(state_dir=tmp_path, validation_model=model, response_model=model, state_model=model,
                        judge_model=model)
    engines = build_engines(settings)
    assert isinstance(engines.validation, LLMSemanticValidator) and isinstance(engines.judge, LLMTaskJudge)
    assert isinstance(engines.response, LLMResponseSynthesizer) and engines.response.needs_recent_calls
    assert isinstance(engines.state, LLMStateUpdater) and engines.state.deferred
    client = engines.llm_client
    assert client is not None and engines.validation.client is client and engines.judge.client is client
    assert client.cache is not None and (tmp_path / "llm_cache.db").exists()
    client.cache.close()


def test_state_none_builds_no_updater_even_with_models_elsewhere(stub, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    engines = build_engines(Settings(state_dir=tmp_path, state_model="none", response_model=stub.model(),
                                     llm_cache=False))
    assert engines.state is None and engines.validation is None
    assert engines.llm_client is not None and engines.llm_client.cache is None


def test_attach_refuses_missing_keys_at_start_up(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        build_engines(Settings(state_dir=tmp_path, response_model="gpt-4o-mini"))
    with pytest.raises(UnknownModelError):
        build_engines(Settings(state_dir=tmp_path, judge_model="gpt-99"))
