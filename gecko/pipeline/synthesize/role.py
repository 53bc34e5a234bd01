"""The `response` role's engines: the schema-driven rules synthesizer, or a model with it as fallback."""

from __future__ import annotations

from gecko.pipeline.stages import EngineBuild, ResponseSynthesizer, RoleEngines
from gecko.pipeline.synthesize.rules import RulesSynthesizer


def _llm(build: EngineBuild[ResponseSynthesizer]) -> ResponseSynthesizer:
    from gecko.pipeline.synthesize.llm import LLMResponseSynthesizer

    return LLMResponseSynthesizer(build.client, build.model, build.fallback, **build.limits())


ENGINES: RoleEngines[ResponseSynthesizer, ResponseSynthesizer] = RoleEngines(rules=RulesSynthesizer, llm=_llm)
