"""The `judge` role's engines: the gating rules judge, or a model (which fails closed, with no fallback)."""

from __future__ import annotations

from gecko.pipeline.judge.rules import RulesJudge
from gecko.pipeline.stages import EngineBuild, RoleEngines, TaskJudge


def _llm(build: EngineBuild[TaskJudge]) -> TaskJudge:
    from gecko.pipeline.judge.llm import LLMTaskJudge

    return LLMTaskJudge(build.client, build.model)


ENGINES: RoleEngines[TaskJudge, TaskJudge] = RoleEngines(rules=RulesJudge, llm=_llm)
