"""`PlannerAgent`: an OpenAI function-calling loop over the tools of a task.

```
messages = [system] + conversation (+ retry feedback as a user message)
repeat up to max_steps:
    reply = model.complete(messages, tools)
    no tool calls → the reply text is the final answer; stop
    else execute every call of the reply (in order, through the executor) and append one tool message each
```

Several calls in one assistant message (parallel tool calls) are executed one after the other in the
order given, so that a session's state changes in a repeatable order. Tool errors (422, unknown tool,
malformed arguments) are tool messages the model reads; infrastructure failures end the run with
`AgentInfrastructureError`, carrying what was done so far.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from inference.agents.base import (
    AgentError,
    AgentInfrastructureError,
    AgentRequest,
    AgentRun,
    AgentStep,
    StopReason,
)
from inference.agents.llm import PlannerModel
from inference.tools.execution import (
    CallRecord,
    ToolExecutor,
    ToolInfrastructureError,
    assistant_message,
    tool_messages,
)
from utils.llm import Prompt, load_prompt

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
DEFAULT_SYSTEM_PROMPT = PROMPTS_DIR / "planner_system.md"
DEFAULT_MAX_STEPS = 10


def load_system_prompt(path: Path | None = None) -> Prompt:
    """The planner's system prompt (default: `prompts/planner_system.md`)."""
    return load_prompt(path or DEFAULT_SYSTEM_PROMPT)


class PlannerAgent:
    """The LLM agent.

    Args:
        model: The chat model (see `inference.agents.llm`).
        system_prompt: Prompt placed first; None for no system message of our own.
        max_steps: Most assistant messages per run.
    """

    def __init__(self, model: PlannerModel, *, system_prompt: Prompt | None = None,
                 max_steps: int = DEFAULT_MAX_STEPS) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.model = model
        self.name = model.name
        self.system_prompt = system_prompt
        self.max_steps = max_steps

    def _messages(self, request: AgentRequest) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        if self.system_prompt is not None:
            messages.append({"role": "system", "content": self.system_prompt.text})
        messages.extend(dict(m) for m in request.messages)
        if request.feedback is not None:
            messages.append({"role": "user", "content": request.feedback.text})
        return messages

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Run the function-calling loop on the current turn.

        Raises:
            AgentInfrastructureError: The model service or a tool backend failed.
            AgentRequestError: The provider refused a request.
        """
        started = time.perf_counter()
        messages = self._messages(request)
        definitions = tools.catalog.openai_tools()
        steps: list[AgentStep] = []
        usage: list[dict[str, Any]] = []
        final_text: str | None = None
        stop: StopReason = "max_steps"

        def partial() -> AgentRun:
            return AgentRun(self.name, tuple(steps), final_text, stop, tuple(usage),
                            time.perf_counter() - started, tuple(messages))

        for index in range(self.max_steps):
            try:
                reply = await self.model.complete(messages, definitions)
            except AgentError as exc:
                exc.partial = partial()
                raise
            usage.extend(reply.usage)
            if not reply.tool_calls:
                final_text, stop = reply.text, "answer"
                steps.append(AgentStep(index, reply.text, ()))
                messages.append({"role": "assistant", "content": reply.text})
                break
            records: list[CallRecord] = []
            try:
                for call in reply.tool_calls:
                    records.append(await tools.execute(call, index))
            except ToolInfrastructureError as exc:
                steps.append(AgentStep(index, reply.text, tuple(records)))
                raise AgentInfrastructureError(f"tool backend failed: {exc}", partial()) from exc
            steps.append(AgentStep(index, reply.text, tuple(records)))
            messages.append(assistant_message(reply.text, records))
            messages.extend(tool_messages(records))
            final_text = reply.text
        return partial()
