"""`LLMNLJudge`: the NL-assertion judge of the official reward (`--judge-llm`), over `utils.llm`.

The judge reads the transcript (`role: content` per message) and the assertions and returns one verdict
per assertion (`prompts/nl_judge.md`). A reply that does not give one verdict per assertion raises, so the
task is left not graded rather than guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.taubench.llm_chat import prompt
from benchmarks.taubench.messages import AssistantMessage, Message, ToolMessage, UserMessage
from benchmarks.taubench.results import NLAssertionCheck
from utils.llm import LLMClient, LLMOutputError, parse_json_reply
from utils.roles import NL_JUDGE

JUDGE_ROLE = NL_JUDGE.name
"""Usage role of the reward's NL judge (Gecko's rehearsal judge is `judge`)."""


def transcript(messages: Sequence[Message]) -> str:
    """`role: content` per message (tool calls shown as their names and arguments)."""
    lines = []
    for message in messages:
        if isinstance(message, (AssistantMessage, UserMessage)):
            content = message.content or ""
            if message.tool_calls:
                content += " " + "; ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
            lines.append(f"{message.role}: {content.strip()}")
        elif isinstance(message, ToolMessage):
            lines.append(f"tool: {message.content or ''}")
    return "\n".join(lines)


class LLMNLJudge:
    """Judge of NL assertions (an `evaluate.NLJudge`).

    Args:
        client: the process's LLM client.
        model: the judge model.
    """

    def __init__(self, client: LLMClient, model: str) -> None:
        self.client = client
        self.model = model
        self._prompt = prompt("nl_judge")
        self.usage: list[dict[str, Any]] = []

    async def __call__(self, messages: Sequence[Message], assertions: Sequence[str]) -> list[NLAssertionCheck]:
        """One verdict per assertion.

        Raises:
            LLMOutputError: the reply is not one verdict per assertion.
        """
        listing = "\n".join(f"- {a}" for a in assertions)
        request = [{"role": "system", "content": self._prompt.text},
                   {"role": "user", "content": f"Transcript:\n{transcript(messages)}\n\nExpected outcomes:\n{listing}"}]
        result = await self.client.chat(self.model, request, role=JUDGE_ROLE, temperature=0.0,
                                        prompt_version=self._prompt.version, usage=self.usage)
        value = parse_json_reply(result.text or "")
        rows = value.get("results") if isinstance(value, dict) else None
        if not isinstance(rows, list) or len(rows) != len(assertions):
            raise LLMOutputError(f"judge gave {len(rows) if isinstance(rows, list) else 'no'} verdicts "
                                 f"for {len(assertions)} assertions")
        return [NLAssertionCheck(nl_assertion=a, met=bool(r.get("metExpectation")) if isinstance(r, dict) else False,
                                 justification=str(r.get("reasoning", "")) if isinstance(r, dict) else "")
                for a, r in zip(assertions, rows)]
