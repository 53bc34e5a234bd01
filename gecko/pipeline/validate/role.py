"""The `validation` role's engines: the syntactic check always runs (in the runner); a model adds the semantic one."""

from __future__ import annotations

from gecko.pipeline.stages import EngineBuild, RoleEngines, SemanticValidator


def _llm(build: EngineBuild[None]) -> SemanticValidator:
    from gecko.pipeline.validate.semantic_llm import LLMSemanticValidator

    return LLMSemanticValidator(build.client, build.model, **build.limits())


ENGINES: RoleEngines[None, SemanticValidator] = RoleEngines(rules=lambda: None, llm=_llm)
