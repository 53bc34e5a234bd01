"""Build the engine of every server role from its name: `rules`, `none`, or a model alias.

The roles come from `utils.roles.SERVER_ROLES`; each role's stage package says how to build its
engines (`gecko.pipeline.<package>.role.ENGINES`, a `RoleEngines`). LLM engines are built by
`gecko.pipeline.llm_engines`, imported only when a role names a model.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from typing import Any

from gecko.pipeline.stages import Engines, RoleEngines
from gecko.toolkits.registry import ToolkitRegistry
from utils.roles import ENGINE_NONE, ENGINE_RULES, SERVER_ROLES, ServerRole, panel_models
from utils.settings import Settings

log = logging.getLogger(__name__)
TOOLKIT_INFO_LIMIT = 200
"""Toolkits summarised for the LLM state bootstrap prompt."""


def role_engines(role: ServerRole) -> RoleEngines[Any, Any]:
    """The `RoleEngines` of `role`, from its stage package (`gecko.pipeline.<package>.role`)."""
    engines = importlib.import_module(f"gecko.pipeline.{role.package}.role").ENGINES
    if not isinstance(engines, RoleEngines):
        raise TypeError(f"gecko.pipeline.{role.package}.role.ENGINES must be a RoleEngines")
    return engines


def build_engines(settings: Settings, registry: ToolkitRegistry | None = None) -> Engines:
    """The engine of every server role, as `settings` names them.

    Raises:
        UnknownModelError, MissingAPIKeyError (from utils.llm): a bad alias or a missing key.
    """
    built: dict[str, Any] = {}
    models: dict[ServerRole, tuple[str, RoleEngines[Any, Any]]] = {}
    for role in SERVER_ROLES:
        name = settings.role_model(role)  # `none` where not allowed was refused by Settings
        if name == ENGINE_NONE:
            built[role.name] = None
        elif name == ENGINE_RULES:
            built[role.name] = role_engines(role).rules()
        else:
            models[role] = (name, role_engines(role))
    client = None
    if models:
        from gecko.pipeline.llm_engines import build_llm_engines

        llm, client = build_llm_engines(settings, models, _toolkit_info(registry))
        built.update(llm)
    return Engines(**built, llm_client=client)


def _toolkit_info(registry: ToolkitRegistry | None) -> Mapping[str, Any]:
    if registry is None:
        return {}
    return {name: {"description": tk.description, "operations": [op.operation_id for op in tk.operations.values()]}
            for name, tk in list(registry.toolkits.items())[:TOOLKIT_INFO_LIMIT]}


def role_endpoints(engines: Engines, settings: Settings) -> dict[str, dict[str, Any]]:
    """Role name → its model's endpoint (`ModelSpec.public()`: capabilities and where each comes from), for the
    roles served by a model; a panel's role → `{"panel": [each judge's endpoint]}`."""
    client = engines.llm_client
    if client is None:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for role in SERVER_ROLES:
        if engines.engine_of(role) in (ENGINE_RULES, ENGINE_NONE):
            continue
        specs = [client.spec(model).public() for model in panel_models(settings.role_model(role))]
        found[role.name] = specs[0] if len(specs) == 1 else {"panel": specs}
    return found


async def probe_endpoints(engines: Engines, settings: Settings) -> None:
    """Find the capabilities of the roles' generic endpoints (JSON-schema output, tools) before the first call,
    so every call of the process sends the same request format; a probe that cannot tell is logged."""
    client = engines.llm_client
    if client is None:
        return
    for name in sorted({model for role in SERVER_ROLES
                        if engines.engine_of(role) not in (ENGINE_RULES, ENGINE_NONE)
                        for model in panel_models(settings.role_model(role))}):
        spec = await client.probe(name)
        if spec.probe_error:
            log.warning("capabilities of %s not probed (%s); assuming %s", name, spec.probe_error, spec.capabilities)
        elif spec.capability_sources:
            log.info("capabilities of %s: %s", name, dict(spec.capability_sources))


def llm_metrics_text(engines: Engines) -> str:
    """Prometheus lines of this worker's LLM usage ('' without LLM roles)."""
    client = engines.llm_client
    return client.usage_totals.prometheus() if client is not None else ""


async def close_engines(engines: Engines) -> None:
    """Release the LLM client's connections and cache (no-op without LLM roles)."""
    client = engines.llm_client
    if client is not None:
        await client.aclose()
        if client.cache is not None:
            client.cache.close()
