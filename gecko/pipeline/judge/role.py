"""The `judge` role's engines: the gating rules judge, a model, or a panel of models (which fail closed, with no
fallback)."""

from __future__ import annotations

from gecko.pipeline.judge.rules import RulesJudge
from gecko.pipeline.stages import EngineBuild, RoleEngines, TaskJudge
from utils.roles import panel_models


def _llm(build: EngineBuild[TaskJudge]) -> TaskJudge:
    from gecko.pipeline.judge.llm import LLMTaskJudge

    models = panel_models(build.model)
    if len(models) == 1:
        return LLMTaskJudge(build.client, build.model, **build.limits())
    from gecko.pipeline.judge.panel import JudgePanel

    return JudgePanel([LLMTaskJudge(build.client, model, **build.limits()) for model in models], build.settings.judge_vote)


ENGINES: RoleEngines[TaskJudge, TaskJudge] = RoleEngines(rules=RulesJudge, llm=_llm)
