"""Choose the engine of each role from its model name: `rules`, `none`, or an LLM alias."""

from __future__ import annotations

from gecko.pipeline.judge.rules import RulesJudge
from gecko.pipeline.stages import Engines
from gecko.pipeline.state.rules import RulesStateUpdater
from gecko.pipeline.synthesize.rules import RulesSynthesizer
from gecko.toolkits.registry import ToolkitRegistry
from utils.settings import ENGINE_NONE, ENGINE_RULES, Settings


class EngineConfigError(ValueError):
    """A role was given a model name that cannot serve it."""


def build_engines(settings: Settings, registry: ToolkitRegistry | None = None) -> Engines:
    """Engines for the four roles; LLM aliases are built by `gecko.pipeline.llm_engines` (lazy import).

    Raises:
        EngineConfigError: `none` where a role cannot be disabled.
        UnknownModelError, MissingAPIKeyError (from utils.llm): a bad alias or a missing key.
    """
    rules_synth, rules_state, rules_judge = RulesSynthesizer(), RulesStateUpdater(), RulesJudge()
    llm_roles = {role: name for role, name in settings.role_models().items() if name not in (ENGINE_RULES, ENGINE_NONE)}
    if settings.response_model == ENGINE_NONE:
        raise EngineConfigError("--response-model cannot be 'none': a tool call needs a response; use 'rules'")
    if settings.judge_model == ENGINE_NONE:
        raise EngineConfigError("--judge-model cannot be 'none'; use 'rules' for the gating judge")
    engines = Engines(
        semantic=None,
        synthesizer=rules_synth,
        state=None if settings.state_model == ENGINE_NONE else rules_state,
        judge=rules_judge,
    )
    if llm_roles:
        from gecko.pipeline.llm_engines import attach_llm_engines

        toolkit_info = None
        if registry is not None:
            toolkit_info = {name: {"description": tk.description,
                                   "operations": [op.operation_id for op in tk.operations.values()]}
                            for name, tk in list(registry.toolkits.items())[:200]}
        attach_llm_engines(engines, settings, llm_roles, rules_synth, rules_state, rules_judge, toolkit_info)
    return engines


def uses_llm(engines: Engines) -> bool:
    """True when any role runs on an LLM."""
    return any(getattr(e, "engine", "rules") not in (ENGINE_RULES, ENGINE_NONE)
               for e in (engines.semantic, engines.synthesizer, engines.state, engines.judge) if e is not None)


def llm_metrics_text(engines: Engines) -> str:
    """Prometheus lines of this worker's LLM usage ('' without LLM roles)."""
    if not uses_llm(engines):
        return ""
    from gecko.pipeline.llm_engines import llm_usage

    usage = llm_usage(engines)
    return usage.prometheus() if usage is not None else ""


async def close_engines(engines: Engines) -> None:
    """Release the LLM client's connections and cache (no-op without LLM roles)."""
    if uses_llm(engines):
        from gecko.pipeline.llm_engines import close_llm

        await close_llm(engines)
