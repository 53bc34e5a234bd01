"""The alias table: names, generic forms, env overrides, capabilities, errors."""

from __future__ import annotations

import pytest

from utils.llm import (
    LLMUsageError,
    MissingAPIKeyError,
    UnknownModelError,
    check_model_names,
    is_engine_name,
    known_model_names,
    resolve_model,
    with_capabilities,
)

REQUIRED = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-5", "gpt-5-mini", "gpt-5.5",
            "deepseek-chat", "qwen-plus"]


@pytest.mark.parametrize("name", REQUIRED)
def test_required_aliases_resolve(name: str) -> None:
    spec = resolve_model(name, env={})
    assert spec.name == name
    assert spec.base_url.startswith("https://")
    assert spec.key_required


def test_openai_alias_defaults_and_key() -> None:
    spec = resolve_model("gpt-4.1-mini", env={"OPENAI_API_KEY": "sk-test"})
    assert spec.provider == "openai"
    assert spec.base_url == "https://api.openai.com/v1"
    assert spec.api_key({"OPENAI_API_KEY": "sk-test"}) == "sk-test"
    assert spec.capabilities.json_schema and spec.capabilities.tools and spec.capabilities.temperature
    assert spec.price is not None and spec.price.cost(1_000_000, 1_000_000) == pytest.approx(2.0)


def test_reasoning_models_drop_temperature() -> None:
    spec = resolve_model("gpt-5-mini", env={})
    assert spec.capabilities.reasoning and not spec.capabilities.temperature
    assert spec.token_param == "max_completion_tokens"


def test_openai_base_url_redirects_every_openai_alias_and_lifts_key_requirement() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9999/v1/"}
    spec = resolve_model("gpt-4o-mini", env=env)
    assert spec.base_url == "http://127.0.0.1:9999/v1"
    assert not spec.key_required
    assert spec.api_key(env) == "sk-no-key"


def test_missing_key_is_a_clear_error() -> None:
    spec = resolve_model("gpt-4o", env={})
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        spec.api_key({})


def test_deepseek_and_qwen_use_their_own_endpoints_and_keys() -> None:
    deepseek = resolve_model("deepseek-chat", env={"DEEPSEEK_BASE_URL": "http://proxy/v1"})
    assert deepseek.base_url == "http://proxy/v1" and deepseek.key_env == "DEEPSEEK_API_KEY"
    assert not deepseek.capabilities.json_schema and deepseek.capabilities.json_mode
    qwen = resolve_model("qwen-plus", env={})
    assert "dashscope" in qwen.base_url and qwen.key_env == "DASHSCOPE_API_KEY"


def test_generic_form_carries_model_and_url() -> None:
    spec = resolve_model("openai-compatible:Qwen/Qwen3-8B@http://localhost:8000/v1", env={})
    assert spec.model == "Qwen/Qwen3-8B"
    assert spec.base_url == "http://localhost:8000/v1"
    assert not spec.key_required and not spec.capabilities.json_schema
    assert spec.api_key({}) == "sk-no-key"
    assert spec.api_key({"OPENAI_COMPATIBLE_API_KEY": "k"}) == "k"


def test_generic_form_without_url_reads_env() -> None:
    spec = resolve_model("openai-compatible:llama3", env={"OPENAI_COMPATIBLE_BASE_URL": "http://h:1/v1"})
    assert spec.base_url == "http://h:1/v1"
    with pytest.raises(LLMUsageError, match="OPENAI_COMPATIBLE_BASE_URL"):
        resolve_model("openai-compatible:llama3", env={})
    with pytest.raises(LLMUsageError, match="http"):
        resolve_model("openai-compatible:m@localhost:8000", env={})


def test_openai_prefix_accepts_any_model_id() -> None:
    spec = resolve_model("openai:gpt-4o-2024-08-06", env={})
    assert spec.model == "gpt-4o-2024-08-06" and spec.price is None


def test_unknown_name_lists_known_names() -> None:
    with pytest.raises(UnknownModelError) as info:
        resolve_model("gpt-17-ultra", env={})
    message = str(info.value)
    assert "gpt-17-ultra" in message and "gpt-4.1-mini" in message and "openai-compatible:" in message
    assert "gpt-4o" in info.value.known


def test_engine_names_are_not_models() -> None:
    for name in ("rules", "none", "scripted-echo"):
        assert is_engine_name(name)
        with pytest.raises(LLMUsageError, match="engine"):
            resolve_model(name, env={})
    assert not is_engine_name("gpt-4o")
    assert "rules" in known_model_names() and "none" in known_model_names()


def test_check_model_names_skips_engines_and_checks_keys() -> None:
    specs = check_model_names({"validator": "rules", "responder": "gpt-4o-mini"}, env={"OPENAI_API_KEY": "x"})
    assert set(specs) == {"responder"}
    with pytest.raises(MissingAPIKeyError):
        check_model_names({"responder": "gpt-4o-mini"}, env={})
    with pytest.raises(UnknownModelError):
        check_model_names({"judge": "nope"}, env={})


def test_with_capabilities_overrides_one_fact() -> None:
    spec = with_capabilities(resolve_model("openai-compatible:m@http://h/v1", env={}), json_schema=True)
    assert spec.capabilities.json_schema and spec.capabilities.json_mode
