"""An attempt of an LLM agent stays inside its model's context window (issue 33 item 2, without a model; the real
llama.cpp run is in tests/integration/test_local_model.py): the server's overflow is the attempt's own end, never
infrastructure; calls per attempt and the retry feedback are bounded by the window; the client and the runner send a
one-slot server one request at a time; `--llm-timeout` reaches the runners' client."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from benchmarks.runner import RunOptions
from benchmarks.runner.batch import _within_slots
from benchmarks.runner.command import build_parser, options_from_args
from benchmarks.runner.context import RunContext
from inference.agents import AgentContextFullError, ContextBudget, PlannerAgent
from inference.agents.base import AgentRequest
from inference.agents.llm import PlannerReply
from inference.tools.catalog import CatalogTool, ToolCatalog
from inference.tools.execution import ToolCallRequest, ToolExecutor, ToolOutcome
from tests.runner.runner_support import ScriptedBenchmark
from utils.llm import LLMContextOverflowError, LLMRequestError, ModelSpec, create_client
from utils.llm.probe import endpoint_limits
from utils.llm.retry import HTTPStatusFailure, RetryPolicy, classify_error, with_retries
from utils.settings import Settings

LLAMA_OVERFLOW = ("request (12009 tokens) exceeds the available context size (8192 tokens), try increasing it")
"""What llama.cpp (xllamacpp 2026.10) answers, HTTP 400, type `exceed_context_size_error`."""
CATALOG = ToolCatalog([CatalogTool("geo", "area", "area", "area")])


class _Backend:
    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        return ToolOutcome(True, json.dumps({"area": 25}), body={"area": 25}, status=200)


class _Looping:
    """Calls `area` `per_reply` times in every reply, like a small model repeating its call until the cap; with
    `overflow_at`, the server refuses that request as too long for its context."""

    name = "looping"

    def __init__(self, per_reply: int, overflow_at: int | None = None) -> None:
        self.per_reply, self.overflow_at, self.requests = per_reply, overflow_at, 0

    async def complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> PlannerReply:
        self.requests += 1
        if self.requests == self.overflow_at:
            raise AgentContextFullError(f"planner model looping: {LLAMA_OVERFLOW}",
                                        usage=({"role": "planner", "error": "request"},))
        calls = tuple(ToolCallRequest(f"c{self.requests}.{i}", "area", '{"base": 10}') for i in range(self.per_reply))
        return PlannerReply(None, calls, ({"role": "planner"},))


def _request() -> AgentRequest:
    return AgentRequest(({"role": "user", "content": "area?"},))


async def test_a_context_overflow_is_a_request_error_never_retried_nor_infrastructure() -> None:
    failure = HTTPStatusFailure(400, LLAMA_OVERFLOW, code="exceed_context_size_error")
    assert not classify_error(failure).retry
    attempts = 0

    async def call() -> None:
        nonlocal attempts
        attempts += 1
        raise failure

    with pytest.raises(LLMContextOverflowError) as caught:
        await with_retries(call, RetryPolicy(max_attempts=4))
    assert attempts == 1 and isinstance(caught.value, LLMRequestError)
    with pytest.raises(LLMRequestError) as other:  # any other 400 stays what it was
        async def bad() -> None:
            raise HTTPStatusFailure(400, "'messages' is required")
        await with_retries(bad, RetryPolicy(max_attempts=4))
    assert not isinstance(other.value, LLMContextOverflowError)


async def test_the_servers_overflow_ends_the_attempt_as_its_own_with_what_it_did() -> None:
    model = _Looping(per_reply=2, overflow_at=3)
    run = await PlannerAgent(model).run(_request(), ToolExecutor(CATALOG, _Backend()))
    assert run.stop_reason == "context_full" and len(run.calls) == 4 and model.requests == 3
    assert {"role": "planner", "error": "request"} in run.usage  # the refused request is accounted


async def test_calls_per_attempt_are_bounded_by_the_window() -> None:
    budget = ContextBudget(8192, reply_tokens=1024)
    assert budget.max_calls == 32 and budget.feedback_chars == 6144
    model = _Looping(per_reply=25)
    run = await PlannerAgent(model, budget=budget).run(_request(), ToolExecutor(CATALOG, _Backend()))
    assert run.stop_reason == "max_calls" and len(run.calls) == 32 and model.requests == 2
    small = await PlannerAgent(_Looping(per_reply=3), max_calls=5).run(_request(), ToolExecutor(CATALOG, _Backend()))
    assert len(small.calls) == 5 and small.stop_reason == "max_calls"


async def test_a_request_that_would_not_fit_is_not_sent() -> None:
    model = _Looping(per_reply=1)
    budget = ContextBudget(700, reply_tokens=400)  # the conversation outgrows 300 tokens after a few calls
    run = await PlannerAgent(model, budget=budget, max_calls=100).run(_request(), ToolExecutor(CATALOG, _Backend()))
    assert run.stop_reason == "context_full" and 1 <= model.requests < 10
    assert budget.fits(run.transcript[:-2]) and not budget.fits(run.transcript)


def test_llama_cpp_props_give_the_window_and_the_slots_and_the_client_keeps_to_them() -> None:
    props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1, "chat_template_caps": {}}
    assert endpoint_limits(props) == (8192, 1)
    assert endpoint_limits({"chat_template_caps": {}}) == (None, None)
    client = create_client(max_concurrency=8)
    spec = ModelSpec("m", "m", "openai-compatible", "http://127.0.0.1:1/v1", "K", False, slots=1)
    assert client._limit(spec)._value == 1  # one request in flight to a one-slot server
    other = ModelSpec("n", "n", "openai-compatible", "http://127.0.0.1:2/v1", "K", False)
    assert client._limit(other)._value == 8


def test_the_runner_runs_no_more_tasks_at_once_than_the_endpoint_has_slots(tmp_path: Path) -> None:
    options = RunOptions(output_dir=tmp_path, workers=8)
    probes = [{"model": "local", "slots": 1}, {"model": "api", "slots": None}]
    assert _within_slots(options, probes).workers == 1
    assert _within_slots(options, [{"model": "api"}]).workers == 8
    assert _within_slots(RunOptions(output_dir=tmp_path, workers=1), probes).workers == 1


def test_llm_timeout_reaches_the_runs_client(tmp_path: Path) -> None:
    settings = Settings(_env_file=None)
    parser = build_parser(ScriptedBenchmark, settings)
    args = parser.parse_args(["--llm-timeout", "300", "--output-dir", str(tmp_path)])
    options = options_from_args(args, settings)
    assert options.llm_timeout_s == 300 and options.public()["llm_timeout_s"] == 300
    assert RunContext("r", options).llm().config.timeout_s == 300
    default = options_from_args(parser.parse_args(["--output-dir", str(tmp_path)]), settings)
    assert RunContext("r", default).llm().config.timeout_s == settings.llm_timeout_s
    with pytest.raises(ValueError, match="--llm-timeout must be more than 0"):
        RunOptions(output_dir=tmp_path, llm_timeout_s=0)
