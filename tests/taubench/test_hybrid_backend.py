"""`HybridToolBackend` routing and read syncing, and the tau2 pieces of hybrid mode that need no server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.taubench.agent_tools import EnvironmentBackend, load_catalog
from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.gats_hybrid import real_calls_since, turn_task
from benchmarks.taubench.messages import AssistantMessage, MessageToolCall, ToolMessage, UserMessage
from inference.tools import CatalogTool, ToolOutcome
from inference.tools.hybrid import HybridToolBackend, ObservedCall


class _Recorder:
    def __init__(self, label: str) -> None:
        self.label = label
        self.calls: list[str] = []

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        self.calls.append(tool.original_name)
        return ToolOutcome(True, f"{self.label}:{tool.original_name}", body={"from": self.label})


def _spec(name: str, access: str) -> CatalogTool:
    return CatalogTool("kit", name, name, name, access=access)


async def test_reads_run_for_real_and_are_synced_before_the_next_write() -> None:
    real, simulated, synced = _Recorder("real"), _Recorder("sim"), []

    async def sync(calls: Sequence[ObservedCall]) -> None:
        synced.append([c.sync_record() for c in calls])

    backend = HybridToolBackend(real, simulated, sync=sync)
    read, write = _spec("get", "read"), _spec("put", "write")
    assert (await backend.execute(read, {"id": 1})).content == "real:get"
    assert synced == []  # buffered until a simulated call needs it
    assert (await backend.execute(write, {"id": 1})).content == "sim:put"
    assert synced == [[{"name": "get", "arguments": {"id": 1}, "result": {"from": "real"}, "toolkit": "kit"}]]
    await backend.execute(write, {"id": 2})
    assert len(synced) == 1  # nothing new to sync
    assert (real.calls, simulated.calls) == (["get"], ["put", "put"])
    assert (backend.real_calls, backend.simulated_calls) == (1, 2)


async def test_environment_backend_reports_tool_errors_as_outcomes(airline: DomainRuntime) -> None:
    catalog = load_catalog(airline)
    env = airline.environment()
    backend = EnvironmentBackend(env)
    spec = catalog.by_original_name("get_user_details")
    assert spec is not None and spec.access == "read"
    ok = await backend.execute(spec, {"user_id": "mia_li_3668"})
    assert ok.ok and ok.body["user_id"] == "mia_li_3668"
    bad = await backend.execute(spec, {"user_id": "nobody"})
    assert not bad.ok and bad.error_kind == "tool_error" and bad.content.startswith("Error:")
    cancel = catalog.by_original_name("cancel_reservation")
    assert cancel is not None and cancel.access == "write"
    assert all("$ref" not in str(s.parameters) for s in catalog.specs)


def test_only_new_successful_real_calls_are_synced() -> None:
    history = [
        AssistantMessage(content="Hi"), UserMessage(content="help"),
        AssistantMessage(tool_calls=[MessageToolCall(id="a", name="get_user_details", arguments={"user_id": "x"}),
                                     MessageToolCall(id="b", name="get_user_details", arguments={"user_id": "y"})]),
        ToolMessage(id="a", content='{"user_id": "x"}'), ToolMessage(id="b", content="Error: no", error=True),
    ]
    records, upto = real_calls_since(history, 0)
    assert records == [{"name": "get_user_details", "arguments": {"user_id": "x"}, "result": {"user_id": "x"}}]
    assert real_calls_since(history, upto) == ([], len(history))


def test_turn_task_holds_the_conversation_and_policy_only() -> None:
    history = [AssistantMessage(content="Hi! How can I help you today?"), UserMessage(content="first ask"),
               AssistantMessage(tool_calls=[MessageToolCall(id="a", name="t", arguments={"secret": "tool-args"})]),
               ToolMessage(id="a", content="tool-result"), AssistantMessage(content="answer"),
               UserMessage(content="second ask")]
    task, previous = turn_task(history, "POLICY-TEXT")
    assert "second ask" in task and "first ask" in task and "POLICY-TEXT" in task
    assert "tool-args" not in task and "tool-result" not in task
    assert previous == ("first ask",)
