"""Task-state updates by an LLM, as RFC 6902 JSON Patches (paper A.5).

The model sees the current state and one finished call and answers with the *change* only, so its
output grows with the change, not with the state. A patch is checked by applying it to a copy (with
`jsonpatch`); a patch that does not apply goes back to the model once with the error (the client's
repair round); if it still fails, or the LLM is unavailable, the fallback reducer (the rules engine)
updates the state and the result says `fallback="rules"`. The stored state is never half-patched.

`apply_real` folds results of real tools in: reads are recorded deterministically by the fallback
reducer (under `observed`), writes go through the LLM one call at a time.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import jsonpatch
import jsonpointer
from pydantic import BaseModel, ConfigDict, Field

from gecko.pipeline.stages import CallContext, RealCall, StateChange, StateUpdater
from utils.llm import LLMClient, LLMError
from utils.llm import stage_tags as tags
from utils.llm.prompts import clip, load_prompt, stage_messages
from utils.roles import BOOTSTRAP, STATE, CallRole

PROMPTS_DIR = Path(__file__).parent / "prompts"
RECORD_READS_KEY = "record_reads"
"""Session-config flag: reads update the state too ("synthesis mode")."""


class PatchOperation(BaseModel):
    """One RFC 6902 operation."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    op: Literal["add", "remove", "replace", "move", "copy", "test"]
    path: str
    """JSON Pointer of the target."""
    value: Any = None
    """Required for add, replace and test."""
    from_: str | None = Field(default=None, alias="from")
    """Source pointer of move and copy."""

    def rfc(self) -> dict[str, Any]:
        """The operation as an RFC 6902 dict."""
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.op in ("add", "replace", "test"):
            out["value"] = self.value
        if self.op in ("move", "copy"):
            out["from"] = self.from_
        return out


class PatchOutput(BaseModel):
    """What the model returns."""

    patch: list[PatchOperation] = Field(default_factory=list)
    reasoning: str = ""


def patch_problems(output: PatchOutput, state: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """(patched copy of `state`, []) or (None, problems) for a model's patch."""
    problems = []
    for index, op in enumerate(output.patch):
        if op.path and not op.path.startswith("/"):
            problems.append(f"patch/{index}: path {op.path!r} must be a JSON Pointer starting with '/'")
        if op.op in ("add", "replace", "test") and "value" not in op.model_fields_set:
            problems.append(f"patch/{index}: '{op.op}' needs a 'value'")
        if op.op in ("move", "copy") and not op.from_:
            problems.append(f"patch/{index}: '{op.op}' needs 'from'")
    if problems:
        return None, problems
    try:
        new = jsonpatch.apply_patch(state, [op.rfc() for op in output.patch], in_place=False)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, ValueError) as exc:
        return None, [f"the patch does not apply to the current state: {exc}"]
    if not isinstance(new, dict):
        return None, ["the patched state must stay a JSON object"]
    return new, []


def _call_view(name: str, access: str, arguments: Any, result: Any, description: str, limit: int,
               source: str = "simulated") -> dict[str, Any]:
    return {"tool": name, "access": access, "description": description, "arguments": arguments,
            "response": clip(result, limit), "source": source}


class LLMStateUpdater:
    """`StateUpdater` backed by an LLM, with a deterministic fallback reducer.

    Args:
        client: the shared LLM client.
        model: model alias (also the engine name).
        fallback: reducer used when the LLM cannot produce an applicable patch (normally `RulesStateUpdater()`);
            it also records real read results in `apply_real`.
        toolkit_info: toolkit name → summary (description, operations) shown to the bootstrap prompt.
        prompts_dir: override of the prompts folder (`patch.md`, `bootstrap.md`).
        max_tokens: output limit of one patch (None: the usage role's default cap).
        deadline_s: total seconds of one LLM step (every attempt and the repair round); None: no total bound.
        max_section_chars: JSON size above which a response is truncated in the prompt.
    """

    deferred = True
    """The runner applies this updater after the response is sent (off the critical path)."""
    needs_recent_calls = False

    def __init__(self, client: LLMClient, model: str, fallback: StateUpdater, *,
                 toolkit_info: Mapping[str, Any] | None = None, prompts_dir: Path | None = None,
                 max_tokens: int | None = None, deadline_s: float | None = None,
                 max_section_chars: int = 20_000) -> None:
        client.spec(model)
        self.engine = model
        self.client = client
        self._fallback = fallback
        self._toolkit_info = dict(toolkit_info or {})
        folder = prompts_dir or PROMPTS_DIR
        self._patch_prompt = load_prompt(folder / "patch.md")
        self._bootstrap_prompt = load_prompt(folder / "bootstrap.md")
        self._max_tokens = max_tokens
        self._deadline_s = deadline_s
        self._max_chars = max_section_chars

    async def _patch(self, role: CallRole, state: dict[str, Any], sections: list[tuple[str, Any]],
                     usage: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(new state, RFC 6902 ops) from the model (`role`: STATE or BOOTSTRAP); raises LLMError when none can be had."""
        prompt = self._bootstrap_prompt if role == BOOTSTRAP else self._patch_prompt
        applied: dict[str, Any] = {}

        def extra_check(output: PatchOutput) -> list[str]:
            new, problems = patch_problems(output, state)
            if new is not None:
                applied["state"] = new
            return problems

        result = await self.client.structured(
            self.engine, stage_messages(prompt, [(tags.SECTION_STATE, state), *sections]), PatchOutput,
            role=role.name, name=tags.schema_name(role.name), extra_check=extra_check, prompt_version=prompt.version,
            usage=usage, max_tokens=self._max_tokens, deadline_s=self._deadline_s,
        )
        ops = [op.rfc() for op in result.value.patch]
        new_state = applied.get("state")
        if new_state is None:
            new_state, problems = patch_problems(result.value, state)
            if new_state is None:  # cannot happen: the check passed
                raise AssertionError(problems)
        return new_state, ops

    async def update(self, ctx: CallContext, response: Any) -> StateChange | None:
        """State after a successful call: the model's patch applied, or the fallback's change."""
        op = ctx.operation
        if op.access == "read" and not ctx.session_config.get(RECORD_READS_KEY):
            return None
        call = _call_view(op.tool_name, op.access, ctx.arguments, response, op.description, self._max_chars)
        try:
            new_state, ops = await self._patch(STATE, ctx.state, [(tags.SECTION_CALL, call)], ctx.usage)
        except LLMError as exc:
            note = f"llm state update unusable ({type(exc).__name__}): {exc}"
            backup = await self._fallback.update(ctx, response)
            if backup is None:
                return StateChange(state=ctx.state, patch=[], engine=self.engine, fallback=self._fallback.engine,
                                   notes=[note])
            return StateChange(state=backup.state, patch=backup.patch, engine=self.engine,
                               fallback=self._fallback.engine, notes=[note, *backup.notes])
        if not ops:
            return None
        return StateChange(state=new_state, patch=ops, engine=self.engine)

    async def bootstrap(self, state: dict[str, Any], toolkits: list[str], usage: list[dict[str, Any]]) -> dict[str, Any]:
        """The initial state enriched by the model (unchanged keys kept); the fallback's result on failure."""
        info = [{"name": name, **(self._toolkit_info.get(name) or {})} for name in toolkits]
        try:
            new_state, _ = await self._patch(BOOTSTRAP, state, [(tags.SECTION_TOOLKITS, info)], usage)
        except LLMError:
            return await self._fallback.bootstrap(state, toolkits, usage)
        return new_state

    async def apply_real(self, state: dict[str, Any], calls: list[RealCall], usage: list[dict[str, Any]]) -> StateChange:
        """Reads recorded by the fallback reducer, writes patched by the model (fallback per call on failure)."""
        current = copy.deepcopy(state)
        notes: list[str] = []
        fell_back = False
        reads: list[RealCall] = []

        async def flush_reads() -> None:
            nonlocal current
            if reads:
                current = (await self._fallback.apply_real(current, list(reads), usage)).state
                reads.clear()

        for call in calls:
            if call.access == "read":
                reads.append(call)
                continue
            await flush_reads()
            name = call.operation.tool_name if call.operation else (
                f"{call.toolkit}/{call.name}" if call.toolkit else call.name)
            description = call.operation.description if call.operation else ""
            view = _call_view(name, "write", call.arguments, call.result, description, self._max_chars, source="real")
            try:
                current, _ = await self._patch(STATE, current, [(tags.SECTION_CALL, view)], usage)
            except LLMError as exc:
                fell_back = True
                notes.append(f"{name}: llm state update unusable ({type(exc).__name__}): {exc}")
                current = (await self._fallback.apply_real(current, [call], usage)).state
        await flush_reads()
        ops = jsonpatch.make_patch(state, current).patch
        return StateChange(state=current, patch=ops, engine=self.engine,
                           fallback=self._fallback.engine if fell_back else None, notes=notes)
