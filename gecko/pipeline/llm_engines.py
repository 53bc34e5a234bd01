"""Build the LLM engine of one server role. The server's engine factory calls this for non-rules names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from gecko.pipeline.judge.llm import LLMTaskJudge
from gecko.pipeline.stages import ResponseSynthesizer, SemanticValidator, StateUpdater, TaskJudge
from gecko.pipeline.state.llm import LLMStateUpdater
from gecko.pipeline.synthesize.llm import LLMResponseSynthesizer
from gecko.pipeline.validate.semantic_llm import LLMSemanticValidator
from utils.llm import LLMClient

ServerRole = Literal["validator", "responder", "state", "judge"]


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
            (a `StateUpdater`, e.g. `RulesStateUpdater()`); ignored otherwise.
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
