"""CAMEL without patches: a Gecko session's tools as CAMEL `FunctionTool`s, and a CAMEL `ChatAgent` planner.

Needs the `[camel]` extra (`pip install -e '.[camel]'`, the unmodified `camel-ai` from PyPI); only public
CAMEL API is used.

```
ChatAgent.astep ─► FunctionTool (one per Gecko tool; JSON schema = the tool's argument schema)
                        └─► ToolExecutor ─► GeckoToolBackend: POST /{toolkit}/{operationId}, X-Session-ID
                              422 → the problem detail is the tool result the model reads
                              Gecko down → the run ends "untested" (AgentInfrastructureError), never scored
```

Offline: CAMEL counts tokens with tiktoken, which downloads its BPE files on first use. `camel_model`
hands CAMEL an `ApproximateTokenCounter` (4 UTF-8 bytes a token, no files) unless `TIKTOKEN_CACHE_DIR`
holds the encodings or a counter is given, so nothing is fetched at run time.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from camel.agents import ChatAgent
from camel.messages import BaseMessage
from camel.models import BaseModelBackend, ModelFactory
from camel.toolkits import FunctionTool
from camel.types import ModelPlatformType, ModelType, OpenAIBackendRole
from camel.utils import BaseTokenCounter

from inference.agents.base import AgentInfrastructureError, AgentRequest, AgentRun, AgentStep, StopReason
from inference.agents.llm import PLANNER_ROLE
from inference.agents.planner import DEFAULT_MAX_STEPS
from inference.gecko.backend import GeckoToolBackend, fetch_catalog
from inference.gecko.client import GeckoClient
from inference.tools.catalog import CatalogTool
from inference.tools.execution import CallRecord, ToolCallRequest, ToolExecutor, ToolInfrastructureError
from utils.llm import Prompt
from utils.llm.aliases import resolve_model

UNAVAILABLE = "The tool service is unavailable; stop and report that the task could not be attempted."


class ApproximateTokenCounter(BaseTokenCounter):
    """A file-free token counter: every 4 bytes of UTF-8 are one token (CAMEL uses counts for context limits)."""

    BYTES_PER_TOKEN = 4

    def count_tokens_from_messages(self, messages: list[Any]) -> int:
        """Tokens of the messages' text and tool calls, plus 4 per message for the framing."""
        total = 0
        for message in messages:
            text = "".join(str(v) for k, v in dict(message).items() if k in ("content", "tool_calls", "name"))
            total += len(self.encode(text)) + 4
        return total

    def encode(self, text: str) -> list[int]:
        """4-byte chunks of UTF-8 as integers (reversible by `decode`)."""
        raw = text.encode("utf-8")
        size = self.BYTES_PER_TOKEN
        return [int.from_bytes(raw[i:i + size].ljust(size, b"\0"), "big") for i in range(0, len(raw), size)]

    def decode(self, token_ids: list[int]) -> str:
        """The text `encode` was given (padding removed)."""
        raw = b"".join(t.to_bytes(self.BYTES_PER_TOKEN, "big") for t in token_ids)
        return raw.rstrip(b"\0").decode("utf-8", errors="ignore")


def camel_model(model: str, *, temperature: float | None = 0.0, token_counter: BaseTokenCounter | None = None,
                timeout_s: float | None = None, max_tokens: int | None = None) -> BaseModelBackend:
    """A CAMEL model backend for a Gecko model alias (any OpenAI-compatible endpoint; see `utils.llm`).

    Raises:
        UnknownModelError, LLMUsageError: the alias cannot be resolved (no key, unknown name).
        ValueError: the model is named `stub`, which CAMEL maps to its own fake model whatever the endpoint.
    """
    spec = resolve_model(model, os.environ)
    if spec.model == ModelType.STUB.value:
        raise ValueError(f"{model!r}: CAMEL answers the model name 'stub' with its own fake model and never calls "
                         f"{spec.base_url}; name the model differently (Gecko's LLM stub answers any name, e.g. "
                         f"'openai-compatible:gecko-stub@{spec.base_url}')")
    if token_counter is None and not os.environ.get("TIKTOKEN_CACHE_DIR"):
        token_counter = ApproximateTokenCounter()
    config: dict[str, Any] = {"temperature": temperature} if temperature is not None else {}
    if max_tokens is not None:
        config["max_tokens"] = max_tokens
    return ModelFactory.create(model_platform=ModelPlatformType.OPENAI_COMPATIBLE_MODEL, model_type=spec.model,
                               url=spec.base_url, api_key=spec.api_key(os.environ) or "unused",
                               model_config_dict=config, token_counter=token_counter, timeout=timeout_s)


class _Calls:
    """What the tools of one run did: the records, and whether the backend failed."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []
        self.failure: ToolInfrastructureError | None = None
        self.step = 0


def _function_tool(spec: CatalogTool, executor: ToolExecutor, calls: _Calls) -> FunctionTool:
    async def call_gecko_tool(**arguments: Any) -> str:
        if calls.failure is not None:
            return UNAVAILABLE
        request = ToolCallRequest(f"call_{uuid.uuid4().hex[:12]}", spec.agent_name, arguments)
        try:
            record = await executor.execute(request, calls.step)
        except ToolInfrastructureError as exc:
            calls.failure = exc
            return UNAVAILABLE
        calls.step += 1
        calls.records.append(record)
        return record.outcome.content

    call_gecko_tool.__name__ = spec.agent_name
    call_gecko_tool.__doc__ = spec.description
    return FunctionTool(call_gecko_tool, openai_tool_schema=spec.openai_tool())


def function_tools(executor: ToolExecutor) -> list[FunctionTool]:
    """Every tool of the executor's catalog as a CAMEL `FunctionTool`.

    Each tool's JSON schema is the tool's argument schema; each call goes through `executor` (so through its
    backend: for Gecko, one session, whose id travels on every call); a rejected call returns the problem
    (every violation, with its argument pointer) as the tool result, which the model reads.
    """
    calls = _Calls()
    return [_function_tool(spec, executor, calls) for spec in executor.catalog.specs]


async def gecko_function_tools(client: GeckoClient, session_id: str, toolkits: Sequence[str]) -> list[FunctionTool]:
    """The tools of `toolkits` in Gecko session `session_id`, for any CAMEL agent.

    Raises:
        GeckoNotFoundError: Gecko does not serve one of the toolkits.
        GeckoUnavailableError: Gecko failed.
    """
    catalog = await fetch_catalog(client, list(toolkits))
    return function_tools(ToolExecutor(catalog, GeckoToolBackend(client, session_id)))


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    text = str(content or "")
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        text += f"\n[called {function.get('name')}({function.get('arguments')})]"
    return text.strip()


class CamelAgent:
    """`inference.agents.Agent` backed by a CAMEL `ChatAgent` (the runners' `--agent-backend camel`).

    Each run builds a fresh `ChatAgent` with the planner's system prompt and the run's tools, loads the
    earlier turns of the conversation into its memory, and steps it once on the current user turn (plus the
    retry feedback). CAMEL drives the tool loop; every call goes through the run's `ToolExecutor`.

    Args:
        model: a Gecko model alias (`camel_model` builds the backend) or a ready CAMEL model backend.
        system_prompt: placed first (the runners pass the planner's prompt); None for no system message of ours.
        max_steps: most tool-calling iterations per run.
        temperature: sampling temperature of a model given by alias.
        name: how the agent is reported (default: the model alias).
        chat_agent: builds the CAMEL agent, called like `ChatAgent` (`system_message`, `model`, `tools`,
            `max_iteration`): pass your own `ChatAgent` subclass to run GATS with it.
        max_tokens: output cap of each completion of a model given by alias (None: the provider's default).

    Raises:
        UnknownModelError, LLMUsageError, ValueError: see `camel_model` (checked here, before any run).
    """

    def __init__(self, model: str | BaseModelBackend, *, system_prompt: Prompt | None = None,
                 max_steps: int = DEFAULT_MAX_STEPS, temperature: float | None = 0.0, name: str | None = None,
                 chat_agent: Callable[..., ChatAgent] = ChatAgent, max_tokens: int | None = None) -> None:
        self.api_model = str(getattr(model, "model_type", model))
        if isinstance(model, str):
            camel_model(model, temperature=temperature, max_tokens=max_tokens)  # fail at start, not mid-run
            self.api_model = resolve_model(model, os.environ).model
        self._model_factory: Callable[[], BaseModelBackend] = (
            (lambda: camel_model(model, temperature=temperature, max_tokens=max_tokens)) if isinstance(model, str)
            else (lambda: model))
        self.model_name = model if isinstance(model, str) else str(model.model_type)
        self.name = name or f"camel:{self.model_name}"
        self.system_prompt = system_prompt
        self.max_steps = max_steps
        self.chat_agent = chat_agent

    def _agent(self, request: AgentRequest, tools: list[FunctionTool]) -> tuple[ChatAgent, str]:
        system = [self.system_prompt.text] if self.system_prompt else []
        system += [_text(m) for m in request.messages if m.get("role") == "system"]
        agent = self.chat_agent(system_message="\n\n".join(system) or None, model=self._model_factory(), tools=tools,
                                max_iteration=self.max_steps)
        turns = [m for m in request.messages if m.get("role") in ("user", "assistant")]
        last_user = max((i for i, m in enumerate(turns) if m.get("role") == "user"), default=-1)
        for message in turns[:last_user]:
            if message["role"] == "user":
                agent.update_memory(BaseMessage.make_user_message("user", _text(message)), OpenAIBackendRole.USER)
            else:
                agent.update_memory(BaseMessage.make_assistant_message("assistant", _text(message)),
                                    OpenAIBackendRole.ASSISTANT)
        prompt = _text(turns[last_user]) if last_user >= 0 else ""
        if request.feedback is not None:
            prompt = f"{prompt}\n\n{request.feedback.text}".strip()
        return agent, prompt

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Let CAMEL work on the turn with the executor's tools.

        Raises:
            AgentInfrastructureError: the tool backend or the model service failed.
        """
        started = time.perf_counter()
        calls = _Calls()
        agent, prompt = self._agent(request, [_function_tool(s, tools, calls) for s in tools.catalog.specs])
        try:
            response = await agent.astep(prompt)
        except Exception as exc:  # noqa: BLE001 - CAMEL raises assorted types for model-service failures
            raise AgentInfrastructureError(f"CAMEL agent ({self.model_name}): {type(exc).__name__}: {exc}",
                                           self._result(calls, None, started, [])) from exc
        final = response.msgs[0].content if response.msgs else None
        usage = self._usage(response.info.get("usage") or {}, time.perf_counter() - started)
        run = self._result(calls, final, started, usage)
        if calls.failure is not None:
            raise AgentInfrastructureError(f"tool backend failed: {calls.failure}", run) from calls.failure
        return run

    def _usage(self, usage: Mapping[str, Any], latency_s: float) -> list[dict[str, Any]]:
        if not usage:
            return []
        return [{"role": PLANNER_ROLE, "model": self.model_name, "api_model": self.api_model, "provider": "camel",
                 "input_tokens": int(usage.get("prompt_tokens") or 0),
                 "output_tokens": int(usage.get("completion_tokens") or 0), "latency_s": round(latency_s, 6),
                 "cached": False, "cost_usd": None, "attempts": 1, "ok": True, "error": None,
                 "prompt_version": "", "purpose": "camel-chat-agent"}]

    def _result(self, calls: _Calls, final: str | None, started: float, usage: list[dict[str, Any]]) -> AgentRun:
        steps = [AgentStep(i, None, (record,)) for i, record in enumerate(calls.records)]
        steps.append(AgentStep(len(steps), final, ()))
        stop: StopReason = "answer" if final is not None and len(calls.records) < self.max_steps else "max_steps"
        return AgentRun(self.name, tuple(steps), final, stop, tuple(usage), time.perf_counter() - started)
