"""Checklist generation and judging by an LLM (paper A.6). Fails closed.

`checklist` turns the task into verifiable items. `judge` decides each item (success, failed or
unknown, with reasoning) from the state, the calls with their responses, the agent's answer and the
tool definitions. Any failure to get a complete verdict raises `JudgeFailure`: the caller reports an
error, never a success.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gecko.pipeline.stages import (
    ChecklistItem,
    ItemStatus,
    ItemVerdict,
    JudgeFailure,
    JudgeInput,
    JudgeResult,
)
from utils.llm import LLMClient, LLMError
from utils.llm import stage_tags as tags
from utils.llm.prompts import clip, load_prompt, stage_messages
from utils.roles import CHECKLIST, JUDGE

PROMPTS_DIR = Path(__file__).parent / "prompts"
MAX_ITEMS = 12


class ChecklistEntry(BaseModel):
    description: str = Field(min_length=1)


class ChecklistOutput(BaseModel):
    """What the checklist prompt returns."""

    items: list[ChecklistEntry] = Field(min_length=1, max_length=MAX_ITEMS)


class VerdictEntry(BaseModel):
    id: str
    status: ItemStatus
    reasoning: str = ""


class JudgeOutput(BaseModel):
    """What the judge prompt returns."""

    items: list[VerdictEntry]


def _coverage_check(checklist: list[ChecklistItem]) -> Any:
    expected = [item.id for item in checklist]

    def check(output: JudgeOutput) -> list[str]:
        seen = [entry.id for entry in output.items]
        problems = [f"no verdict for checklist item {i!r}" for i in expected if i not in seen]
        problems += [f"unknown checklist id {i!r}; use the ids given" for i in seen if i not in expected]
        problems += [f"more than one verdict for item {i!r}" for i in sorted(set(seen)) if seen.count(i) > 1]
        return problems

    return check


class LLMTaskJudge:
    """`TaskJudge` backed by an LLM.

    Args:
        client: the shared LLM client.
        model: model alias (also the engine name).
        prompts_dir: override of the prompts folder (`checklist.md`, `judge.md`).
        max_tokens: output limit of one reply (None: the usage role's default cap).
        deadline_s: total seconds of one LLM step (every attempt and the repair round); None: no total bound.
        max_section_chars: JSON size above which the state or a call's response is truncated in the prompt.
    """

    def __init__(self, client: LLMClient, model: str, *, prompts_dir: Path | None = None,
                 max_tokens: int | None = None, deadline_s: float | None = None,
                 max_section_chars: int = 60_000) -> None:
        client.spec(model)
        self.engine = model
        self.client = client
        folder = prompts_dir or PROMPTS_DIR
        self._checklist_prompt = load_prompt(folder / "checklist.md")
        self._judge_prompt = load_prompt(folder / "judge.md")
        self._max_tokens = max_tokens
        self._deadline_s = deadline_s
        self._max_chars = max_section_chars

    async def checklist(self, task: str, previous_tasks: list[str], tools: list[dict[str, Any]],
                        usage: list[dict[str, Any]]) -> list[ChecklistItem]:
        """Verifiable items for `task`.

        Raises:
            JudgeFailure: no usable checklist could be produced.
        """
        messages = stage_messages(self._checklist_prompt, [
            (tags.SECTION_TASK, task), (tags.SECTION_PREVIOUS_TASKS, previous_tasks), (tags.SECTION_TOOLS, tools),
        ])
        try:
            result = await self.client.structured(
                self.engine, messages, ChecklistOutput, role=CHECKLIST.name, name=tags.schema_name(CHECKLIST.name),
                prompt_version=self._checklist_prompt.version, usage=usage, max_tokens=self._max_tokens,
                deadline_s=self._deadline_s,
            )
        except LLMError as exc:
            raise JudgeFailure(f"checklist generation failed ({type(exc).__name__}): {exc}") from exc
        return [ChecklistItem(id=str(index), description=entry.description.strip())
                for index, entry in enumerate(result.value.items, start=1)]

    def messages(self, data: JudgeInput) -> list[dict[str, str]]:
        """The judge request."""
        calls = [clip(call, self._max_chars // 10) for call in data.calls]
        return stage_messages(self._judge_prompt, [
            (tags.SECTION_TASK, data.task),
            (tags.SECTION_CHECKLIST, [{"id": i.id, "description": i.description} for i in data.checklist]),
            (tags.SECTION_TOOLS, data.tools),
            (tags.SECTION_CALLS, calls),
            (tags.SECTION_STATE, clip(data.state, self._max_chars)),
            (tags.SECTION_AGENT_RESPONSE, data.agent_response or ""),
        ])

    async def judge(self, data: JudgeInput) -> JudgeResult:
        """A verdict per checklist item.

        Raises:
            JudgeFailure: empty checklist, LLM unavailable, or no complete verdict after the repair round.
        """
        if not data.checklist:
            raise JudgeFailure("the checklist is empty: nothing to judge")
        try:
            result = await self.client.structured(
                self.engine, self.messages(data), JudgeOutput, role=JUDGE.name, name=tags.schema_name(JUDGE.name),
                extra_check=_coverage_check(data.checklist), prompt_version=self._judge_prompt.version,
                usage=data.usage, max_tokens=self._max_tokens, deadline_s=self._deadline_s,
            )
        except LLMError as exc:
            raise JudgeFailure(f"judge failed ({type(exc).__name__}): {exc}") from exc
        by_id = {entry.id: entry for entry in result.value.items}
        items = [ItemVerdict(item.id, item.description, by_id[item.id].status, by_id[item.id].reasoning.strip())
                 for item in data.checklist]
        return JudgeResult(items=items, engine=self.engine)
