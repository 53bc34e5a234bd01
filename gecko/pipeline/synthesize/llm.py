"""Response synthesis by an LLM (paper A.4), with a guaranteed schema-valid result.

The model sees the operation's contract, the validated arguments, the current state and the recent
calls, and answers `{"response": <body>}` (wrapping keeps JSON mode usable for array or scalar
bodies). The body is checked against `operation.response_validator`; the client sends the errors
back once; if the body still does not fit, or the LLM is unavailable, the fallback synthesizer
(the rules engine) answers and the result says `fallback="rules"`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gecko.pipeline.stages import CallContext, ResponseSynthesizer, Synthesis
from gecko.toolkits.model import Operation
from utils.llm import LLMClient, LLMError
from utils.llm import stage_tags as tags
from utils.llm.client import Check
from utils.llm.prompts import clip, inline_refs, load_prompt, stage_messages
from utils.roles import RESPONDER

PROMPT_PATH = Path(__file__).parent / "prompts" / "response.md"
MAX_REPORTED = 20


def wrap_schema(schema: dict[str, Any] | bool | None) -> dict[str, Any]:
    """`{"response": schema}` as an object schema, with the body schema's `$defs` lifted to the root."""
    inner: Any = {} if schema is None or schema is True else schema
    defs: dict[str, Any] = {}
    if isinstance(inner, dict) and "$defs" in inner:
        inner = dict(inner)
        defs = inner.pop("$defs")
    wrapper: dict[str, Any] = {
        "type": "object", "properties": {"response": inner}, "required": ["response"], "additionalProperties": False,
    }
    if defs:
        wrapper["$defs"] = defs
    return wrapper


def _body_check(operation: Operation) -> Check:
    def check(value: Any) -> tuple[Any, list[str]]:
        if not isinstance(value, dict) or "response" not in value:
            return None, ['(root): expected an object {"response": <the body>}']
        body = value["response"]
        validator = operation.response_validator
        if validator is None or operation.response_is_valid(body):
            return body, []
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))[:MAX_REPORTED]
        return body, [f"response{''.join(f'/{p}' for p in e.absolute_path)}: {e.message}" for e in errors]

    return check


@dataclass(frozen=True)
class _OperationView:
    tool: dict[str, Any]
    response_schema: Any
    wrapped: dict[str, Any]
    check: Check


class LLMResponseSynthesizer:
    """`ResponseSynthesizer` backed by an LLM, falling back to another synthesizer.

    Args:
        client: the shared LLM client.
        model: model alias (also the engine name).
        fallback: answers when the LLM output cannot be made to fit (normally `RulesSynthesizer()`).
        prompt_path: override of the prompt file.
        max_tokens: output limit of one response (None: the usage role's default cap).
        deadline_s: total seconds of one LLM step (every attempt and the repair round); None: no total bound.
        recent_calls: how many recent calls of the session go into the prompt.
        max_section_chars: JSON size above which the state or a recent response is truncated in the prompt.
    """

    needs_recent_calls = True
    """Tells the runner to load the session's last calls into `CallContext.recent_calls`."""

    def __init__(self, client: LLMClient, model: str, fallback: ResponseSynthesizer, *,
                 prompt_path: Path | None = None, max_tokens: int | None = None, deadline_s: float | None = None,
                 recent_calls: int = 5, max_section_chars: int = 60_000) -> None:
        client.spec(model)
        self.engine = model
        self.client = client
        self._fallback = fallback
        self._prompt = load_prompt(prompt_path or PROMPT_PATH)
        self._max_tokens = max_tokens
        self._deadline_s = deadline_s
        self._recent = recent_calls
        self._max_chars = max_section_chars
        self._views: dict[str, _OperationView] = {}
        """Prompt view, output schema and check of each operation, built once per process."""

    def messages(self, ctx: CallContext) -> list[dict[str, str]]:
        """The request for one call."""
        op = ctx.operation
        view = self._views.get(op.tool_name)
        if view is None:
            view = _OperationView(
                tool={"toolkit": op.toolkit, "name": op.operation_id, "method": op.method.upper(), "path": op.path,
                      "access": op.access, "summary": op.summary, "description": op.description,
                      "parameters": inline_refs(op.args_schema)},
                response_schema=inline_refs(op.response_schema) if op.response_schema is not None else {},
                wrapped=wrap_schema(op.response_schema), check=_body_check(op),
            )
            self._views[op.tool_name] = view
        recent = [clip(call, self._max_chars // 10) for call in ctx.recent_calls[-self._recent:]] if self._recent else []
        return stage_messages(self._prompt, [
            (tags.SECTION_TOOL, view.tool),
            (tags.SECTION_RESPONSE_SCHEMA, view.response_schema),
            (tags.SECTION_STATE, clip(ctx.state, self._max_chars)),
            (tags.SECTION_RECENT_CALLS, recent),
            (tags.SECTION_ARGUMENTS, ctx.arguments),
        ])

    async def synthesize(self, ctx: CallContext) -> Synthesis:
        """A body that validates against the response schema (from the LLM, else from the fallback)."""
        messages = self.messages(ctx)
        view = self._views[ctx.operation.tool_name]
        try:
            result = await self.client.structured_json(
                self.engine, messages, view.wrapped, role=RESPONDER.name,
                name=tags.schema_name(RESPONDER.name), check=view.check, prompt_version=self._prompt.version,
                usage=ctx.usage, max_tokens=self._max_tokens, deadline_s=self._deadline_s,
            )
        except LLMError as exc:
            backup = await self._fallback.synthesize(ctx)
            note = f"llm response unusable ({type(exc).__name__}): {exc}"
            return Synthesis(body=backup.body, engine=self.engine, fallback=backup.engine,
                             notes=[note, *backup.notes])
        notes = ["repaired after schema errors"] if result.repaired else []
        return Synthesis(body=result.value, engine=self.engine, notes=notes)
