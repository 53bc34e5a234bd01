"""`PlannerAgent`: an OpenAI function-calling loop over the tools of a task.

```
messages = [system] + conversation (+ retry feedback as a user message)
repeat up to max_steps:
    [budget: the next request would not fit the context window → stop (context_full)]
    reply = model.complete(messages, tools)          (the server says it does not fit → stop (context_full))
    no tool calls → the reply text is the final answer; stop
    else execute every call of the reply (in order, through the executor) and append one tool message each,
         at most max_calls in the run (more → stop (max_calls))
```

With a `ContextBudget` (the model's context window is known) `max_calls` defaults to what the window holds. A run
that stops for its budget is the agent's own attempt, judged on what it did, never an infrastructure failure.

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
    AgentContextFullError,
    AgentError,
    AgentInfrastructureError,
    AgentRequest,
    AgentRun,
    AgentStep,
    StopReason,
)
from inference.agents.budget import ContextBudget
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
        max_calls: Most tool calls per run (None: the budget's, or no limit without one).
        budget: The model's context window, when known: requests that would not fit are not sent.
    """

    def __init__(self, model: PlannerModel, *, system_prompt: Prompt | None = None,
                 max_steps: int = DEFAULT_MAX_STEPS, max_calls: int | None = None,
                 budget: ContextBudget | None = None) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if max_calls is not None and max_calls < 1:
            raise ValueError("max_calls must be at least 1")
        self.model = model
        self.name = model.name
        self.system_prompt = system_prompt
        self.max_steps = max_steps
        self.budget = budget
        self.max_calls = max_calls if max_calls is not None else budget.max_calls if budget is not None else None

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

        made = 0
        for index in range(self.max_steps):
            if self.budget is not None and not self.budget.fits(messages, definitions):
                stop = "context_full"
                break
            try:
                reply = await self.model.complete(messages, definitions)
            except AgentContextFullError as exc:  # the model's own conversation outgrew its window: its attempt
                usage.extend(exc.usage)
                stop = "context_full"
                break
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
            wanted = reply.tool_calls
            capped = self.max_calls is not None and made + len(wanted) > self.max_calls
            if capped and self.max_calls is not None:
                wanted = wanted[: max(0, self.max_calls - made)]
            made += len(wanted)
            try:
                for call in wanted:
                    records.append(await tools.execute(call, index))
            except ToolInfrastructureError as exc:
                steps.append(AgentStep(index, reply.text, tuple(records)))
                raise AgentInfrastructureError(f"tool backend failed: {exc}", partial()) from exc
            steps.append(AgentStep(index, reply.text, tuple(records)))
            messages.append(assistant_message(reply.text, records))
            messages.extend(tool_messages(records))
            final_text = reply.text
            if capped:
                stop = "max_calls"
                break
        return partial()
