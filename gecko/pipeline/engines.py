"""Choose the engine of each role from its model name: `rules`, `none`, or an LLM alias."""

from __future__ import annotations

from gecko.pipeline.judge.rules import RulesJudge
from gecko.pipeline.stages import Engines
from gecko.pipeline.state.rules import RulesStateUpdater
from gecko.pipeline.synthesize.rules import RulesSynthesizer
from utils.settings import ENGINE_NONE, ENGINE_RULES, Settings


class EngineConfigError(ValueError):
    """A role was given a model name that cannot serve it."""


def build_engines(settings: Settings) -> Engines:
    """Engines for the four roles; LLM aliases are built by `gecko.pipeline.llm_engines` (lazy import)."""
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

        attach_llm_engines(engines, settings, llm_roles, rules_synth, rules_state, rules_judge)
    return engines
