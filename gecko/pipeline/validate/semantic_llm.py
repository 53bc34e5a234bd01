"""Semantic validation by an LLM (paper A.3.2): do the arguments make sense for the tool?

Runs after syntactic validation passed. The model sees the tool's description and a "soft" argument
schema (hard constraints removed: they are already enforced) and returns `{valid, errors[]}`. If the
check itself fails (timeout, rate limit, unusable output after the repair round) the verdict is
`unchecked` with the reason, never `valid`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gecko.pipeline.stages import CallContext, SemanticVerdict
from utils.llm import LLMClient, LLMError
from utils.llm import stage_tags as tags
from utils.llm.prompts import inline_refs, load_prompt, stage_messages
from utils.roles import VALIDATOR

PROMPT_PATH = Path(__file__).parent / "prompts" / "semantic.md"
HARD_KEYWORDS = frozenset({
    "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
    "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
    "required", "additionalProperties", "unevaluatedProperties", "propertyNames", "contains",
})
"""Keywords the syntactic validator already enforced; left out so the model judges meaning only."""
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
_VALUES = frozenset({"default", "examples", "description", "title"})
DEFAULT_ERROR = "The arguments do not fit what the tool's parameters describe."


class SemanticOutput(BaseModel):
    """What the model returns."""

    valid: bool
    """True when the arguments make sense for the tool."""
    errors: list[str] = Field(default_factory=list)
    """One actionable sentence per problem (empty when valid)."""


def soft_schema(schema: Any) -> Any:
    """`schema` without the hard-constraint keywords, recursively (descriptions and structure kept)."""
    if isinstance(schema, list):
        return [soft_schema(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in HARD_KEYWORDS:
            continue
        if key in _NAME_MAPS and isinstance(value, dict):
            out[key] = {name: soft_schema(sub) for name, sub in value.items()}
        elif key in _VALUES:
            out[key] = value
        else:
            out[key] = soft_schema(value)
    return out


class LLMSemanticValidator:
    """`SemanticValidator` backed by an LLM.

    Args:
        client: the shared LLM client.
        model: model alias (also the engine name reported in /health and history).
        prompt_path: override of the prompt file.
        max_tokens: output limit of the verdict (None: the usage role's default cap).
        deadline_s: total seconds of one LLM step (every attempt and the repair round); None: no total bound.
    """

    needs_recent_calls = False

    def __init__(self, client: LLMClient, model: str, *, prompt_path: Path | None = None,
                 max_tokens: int | None = None, deadline_s: float | None = None) -> None:
        client.spec(model)
        self.engine = model
        self.client = client
        self._prompt = load_prompt(prompt_path or PROMPT_PATH)
        self._max_tokens = max_tokens
        self._deadline_s = deadline_s
        self._tools: dict[str, dict[str, Any]] = {}
        """Prompt view of each operation, built once (operations live as long as the process)."""

    def messages(self, ctx: CallContext) -> list[dict[str, str]]:
        """The request for one call (public for tests and prompt inspection)."""
        op = ctx.operation
        tool = self._tools.get(op.tool_name)
        if tool is None:
            tool = {"name": op.operation_id, "toolkit": op.toolkit, "summary": op.summary,
                    "description": op.description, "parameters": soft_schema(inline_refs(op.args_schema))}
            self._tools[op.tool_name] = tool
        return stage_messages(self._prompt, [(tags.SECTION_TOOL, tool), (tags.SECTION_ARGUMENTS, ctx.arguments)])

    async def check(self, ctx: CallContext) -> SemanticVerdict:
        """Valid, invalid with errors, or unchecked with the reason."""
        try:
            result = await self.client.structured(
                self.engine, self.messages(ctx), SemanticOutput, role=VALIDATOR.name, name=tags.schema_name(VALIDATOR.name),
                prompt_version=self._prompt.version, usage=ctx.usage, max_tokens=self._max_tokens,
                deadline_s=self._deadline_s,
            )
        except LLMError as exc:
            return SemanticVerdict("unchecked", reason=f"semantic check failed ({type(exc).__name__}): {exc}")
        if result.value.valid:
            return SemanticVerdict("valid")
        errors = [e.strip() for e in result.value.errors if e and e.strip()] or [DEFAULT_ERROR]
        return SemanticVerdict("invalid", errors=errors)
