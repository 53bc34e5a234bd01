"""Build the LLM engines of the server roles. `gecko.pipeline.engines` calls `attach_llm_engines` for LLM names.

Settings read (with these defaults when the field does not exist): `llm_cache` (True; `--no-cache`
sets False), `llm_cache_path` (`state_dir/llm_cache.db`), `llm_timeout_s` (60), `llm_max_attempts` (4),
`llm_max_concurrency` (256), `llm_http_backend` ("auto"; "raw" for the SDK-free transport).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from gecko.pipeline.judge.llm import LLMTaskJudge
from gecko.pipeline.stages import Engines, ResponseSynthesizer, SemanticValidator, StateUpdater, TaskJudge
from gecko.pipeline.state.llm import LLMStateUpdater
from gecko.pipeline.synthesize.llm import LLMResponseSynthesizer
from gecko.pipeline.validate.semantic_llm import LLMSemanticValidator
from utils.llm import LLMClient, check_model_names, create_client, load_env
from utils.llm.factory import CACHE_FILE
from utils.llm.usage import UsageAggregator

ServerRole = Literal["validator", "responder", "state", "judge"]
LLMEngine = LLMSemanticValidator | LLMResponseSynthesizer | LLMStateUpdater | LLMTaskJudge


def build_llm_engine(
    role: ServerRole,
    model: str,
    client: LLMClient,
    *,
    fallback: Any = None,
    toolkit_info: Mapping[str, Any] | None = None,
) -> SemanticValidator | ResponseSynthesizer | StateUpdater | TaskJudge:
    """The LLM engine for `role`, using `model` through `client`.

    Args:
        role: validator, responder, state or judge.
        model: model alias (resolved now, so a bad name fails at start-up).
        client: the worker's shared `LLMClient`.
        fallback: required for responder (a `ResponseSynthesizer`, e.g. `RulesSynthesizer()`) and state
            (a `StateUpdater`, e.g. `RulesStateUpdater()`); ignored otherwise (the judge fails closed).
        toolkit_info: toolkit name → {description, operations} for the state bootstrap prompt.

    Raises:
        UnknownModelError, LLMUsageError: bad model name.
        ValueError: unknown role, or a missing fallback.
    """
    if role == "validator":
        return LLMSemanticValidator(client, model)
    if role == "responder":
        if fallback is None:
            raise ValueError("the responder needs a fallback synthesizer (e.g. RulesSynthesizer())")
        return LLMResponseSynthesizer(client, model, fallback)
    if role == "state":
        if fallback is None:
            raise ValueError("the state updater needs a fallback reducer (e.g. RulesStateUpdater())")
        return LLMStateUpdater(client, model, fallback, toolkit_info=toolkit_info)
    if role == "judge":
        return LLMTaskJudge(client, model)
    raise ValueError(f"unknown role {role!r}; expected validator, responder, state or judge")


def client_from_settings(settings: Any) -> LLMClient:
    """The worker's `LLMClient`, configured from `settings` (see the module docstring for the fields)."""
    enabled = bool(getattr(settings, "llm_cache", True))
    path = getattr(settings, "llm_cache_path", None) or Path(settings.state_dir) / CACHE_FILE
    return create_client(
        cache_path=path if enabled else None, cache_enabled=enabled,
        timeout_s=float(getattr(settings, "llm_timeout_s", 60.0)),
        max_attempts=int(getattr(settings, "llm_max_attempts", 4)),
        max_concurrency=int(getattr(settings, "llm_max_concurrency", 256)),
        http_backend=getattr(settings, "llm_http_backend", "auto"),
    )


def attach_llm_engines(
    engines: Engines, settings: Any, llm_roles: Mapping[str, str], rules_synth: ResponseSynthesizer,
    rules_state: StateUpdater, rules_judge: TaskJudge | None = None,
    toolkit_info: Mapping[str, Any] | None = None,
) -> LLMClient:
    """Replace the engines of `llm_roles` (role → model alias) with LLM engines sharing one client.

    Loads `.env` first (variables already set win), then checks every name and key, so a bad alias or
    a missing key stops the server at start-up with a message naming it.

    Args:
        engines: the rules engines, modified in place.
        settings: the server's `Settings`.
        llm_roles: role (validator, responder, state, judge) → model alias.
        rules_synth: fallback of the LLM responder.
        rules_state: fallback of the LLM state updater (also records real reads).
        rules_judge: unused: an LLM judge fails closed (`JudgeFailure`) rather than fall back.
        toolkit_info: toolkit name → summary for the bootstrap prompt.

    Returns:
        The shared client (its `usage_totals` feed `GET /metrics`).

    Raises:
        UnknownModelError, MissingAPIKeyError, LLMUsageError: a bad name or a missing key.
    """
    load_env()
    check_model_names(llm_roles)
    client = client_from_settings(settings)
    for role, model in llm_roles.items():
        if role == "validator":
            engines.semantic = build_llm_engine("validator", model, client)
        elif role == "responder":
            engines.synthesizer = build_llm_engine("responder", model, client, fallback=rules_synth)
        elif role == "state":
            if engines.state is not None:
                engines.state = build_llm_engine("state", model, client, fallback=rules_state,
                                                 toolkit_info=toolkit_info)
        elif role == "judge":
            engines.judge = build_llm_engine("judge", model, client)
        else:
            raise ValueError(f"unknown role {role!r}")
    return client


def llm_client(engines: Engines) -> LLMClient | None:
    """The LLM client shared by `engines` (None when every role is rules/none); close it at shutdown."""
    for engine in (engines.semantic, engines.synthesizer, engines.state, engines.judge):
        client = getattr(engine, "client", None)
        if isinstance(client, LLMClient):
            return client
    return None


def llm_usage(engines: Engines) -> UsageAggregator | None:
    """Usage totals of the LLM client shared by `engines`, for `GET /metrics` (None without LLM roles)."""
    client = llm_client(engines)
    return client.usage_totals if client is not None else None


async def close_llm(engines: Engines) -> None:
    """Close the shared client's connections and its cache (call from the app's lifespan shutdown)."""
    client = llm_client(engines)
    if client is not None:
        await client.aclose()
        if client.cache is not None:
            client.cache.close()
