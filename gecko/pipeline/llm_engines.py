"""Build the LLM engines of the server roles that name a model; `gecko.pipeline.engines` imports this lazily."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gecko.pipeline.stages import EngineBuild, RoleEngines
from utils.llm import LLMClient, check_model_names, create_client, load_env
from utils.llm.factory import CACHE_FILE
from utils.roles import ServerRole, panel_models
from utils.settings import Settings


def client_from_settings(settings: Settings) -> LLMClient:
    """The worker's `LLMClient`, configured from the `llm_*` settings."""
    return create_client(
        cache_path=settings.llm_cache_path or settings.state_dir / CACHE_FILE, cache_enabled=settings.llm_cache,
        timeout_s=settings.llm_timeout_s, max_attempts=settings.llm_max_attempts,
        max_concurrency=settings.llm_max_concurrency, http_backend=settings.llm_http_backend,
    )


def build_llm_engines(
    settings: Settings, models: Mapping[ServerRole, tuple[str, RoleEngines[Any, Any]]], toolkit_info: Mapping[str, Any]
) -> tuple[dict[str, Any], LLMClient]:
    """The LLM engine of each role in `models` (role → (model alias, its builders)), all sharing one client.

    Loads `.env` first (variables already set win), then checks every name and key, so a bad alias or
    a missing key stops the server at start-up with a message naming it.

    Returns:
        (role name → engine, the shared client; its `usage_totals` feed `GET /metrics`).

    Raises:
        UnknownModelError, MissingAPIKeyError, LLMUsageError: a bad name or a missing key.
    """
    load_env()
    check_model_names({f"{role.public}[{index}]" if "," in model else role.public: name
                       for role, (model, _) in models.items() for index, name in enumerate(panel_models(model))})
    client = client_from_settings(settings)
    engines = {}
    for role, (model, builders) in models.items():
        engines[role.name] = builders.llm(EngineBuild(role=role, model=model, client=client,
                                                      fallback=builders.rules(), settings=settings,
                                                      toolkit_info=toolkit_info))
    return engines, client
