"""The `state` role's engines: the rules reducer, or a model (JSON Patches) with the reducer as fallback."""

from __future__ import annotations

from gecko.pipeline.stages import EngineBuild, RoleEngines, StateUpdater
from gecko.pipeline.state.rules import RulesStateUpdater


def _llm(build: EngineBuild[StateUpdater]) -> StateUpdater:
    from gecko.pipeline.state.llm import LLMStateUpdater

    return LLMStateUpdater(build.client, build.model, build.fallback, toolkit_info=build.toolkit_info,
                           **build.limits())


ENGINES: RoleEngines[StateUpdater, StateUpdater] = RoleEngines(rules=RulesStateUpdater, llm=_llm)
