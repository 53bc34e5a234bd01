"""Provider-safe names mapped back exactly, the catalog, and the one tool-call path (executor)."""

from __future__ import annotations

import re
from typing import Any

from inference.tools import (
    CatalogTool,
    ToolCallRequest,
    ToolCatalog,
    ToolExecutor,
    ToolOutcome,
    assign_agent_names,
    is_provider_safe,
)

SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _toolkit(name: str, *ops: str) -> dict[str, Any]:
    return {"name": name, "tools": [{"name": op, "original_name": op.replace("_", "."), "access": "read",
                                     "description": f"does {op}",
                                     "arguments_schema": {"type": "object", "properties": {
                                         "x": {"type": "object", "properties": {"y": {"type": "integer"}}}}}}
                                    for op in ops]}


def test_names_are_safe_unique_and_stable() -> None:
    pairs = [("a", "get"), ("b", "get"), ("c", "math.factorial"), ("d", "x" * 80), ("e", "x" * 80), ("f", "ok-1")]
    names = assign_agent_names(pairs)
    assert len(set(names.values())) == len(pairs)
    assert all(SAFE.match(n) for n in names.values())
    assert names[("f", "ok-1")] == "ok-1"
    assert names == assign_agent_names(list(reversed(pairs)))
    assert not is_provider_safe("math.factorial") and is_provider_safe("math_factorial")


def test_catalog_resolves_both_ways_and_keeps_nested_schemas() -> None:
    catalog = ToolCatalog.from_toolkits([_toolkit("t1", "get_item", "list_items"), _toolkit("t2", "get_item")])
    names = sorted(catalog.by_agent_name)
    assert len(names) == 3 and all(SAFE.match(n) for n in names)
    for spec in catalog.specs:
        assert catalog.resolve(spec.agent_name) is spec
    t2 = next(s for s in catalog.specs if s.toolkit == "t2")
    assert catalog.resolve(t2.agent_name).operation_id == "get_item"
    assert catalog.by_original_name("list.items").operation_id == "list_items"
    tool = catalog.openai_tools()[0]
    assert tool["function"]["parameters"]["properties"]["x"]["properties"]["y"] == {"type": "integer"}
    assert catalog.suggestions("list_itemz") == ["list_items"]


class _Backend:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict]] = []
        self.messages: list[str | None] = []

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        self.seen.append((tool.operation_id, arguments))
        self.messages.append(message)
        return ToolOutcome(True, "{}", body={}, status=200)


async def test_executor_refuses_unknown_names_and_malformed_arguments_without_the_backend() -> None:
    backend = _Backend()
    executor = ToolExecutor(ToolCatalog.from_toolkits([_toolkit("t1", "list_items")]), backend)
    unknown = await executor.execute(ToolCallRequest("1", "list_itemz", "{}"))
    assert unknown.outcome.error_kind == "unknown_tool" and not unknown.outcome.reached_backend
    assert "did you mean: list_items" in unknown.outcome.content and unknown.name == "list_itemz"
    malformed = await executor.execute(ToolCallRequest("2", "list_items", '{"x": '))
    assert malformed.outcome.error_kind == "malformed_arguments" and malformed.arguments is None
    not_object = await executor.execute(ToolCallRequest("3", "list_items", "[1]"))
    assert not_object.outcome.error_kind == "malformed_arguments"
    ok = await executor.execute(ToolCallRequest("4", "list_items", '{"x": {"y": 1}}'), step=2)
    assert ok.outcome.ok and ok.step == 2 and ok.name == "list.items"
    assert backend.seen == [("list_items", {"x": {"y": 1}})]


async def test_calls_of_one_step_share_a_message_id_and_no_other_call_does() -> None:
    backend = _Backend()
    catalog = ToolCatalog.from_toolkits([_toolkit("t1", "list_items")])
    executor, other_run = ToolExecutor(catalog, backend), ToolExecutor(catalog, backend)
    for step in (0, 0, 1):
        await executor.execute(ToolCallRequest("1", "list_items", "{}"), step=step)
    await other_run.execute(ToolCallRequest("1", "list_items", "{}"), step=0)
    first, parallel, later, elsewhere = backend.messages
    assert first == parallel and len({first, later, elsewhere}) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9._:-]{1,64}", m or "") for m in backend.messages)  # what Gecko accepts


async def test_real_tools_backend_runs_bfcl_classes_through_the_executor() -> None:
    from benchmarks.bfcl.real_tools import BfclRealTools
    from inference.tools import RealToolsBackend

    spec = CatalogTool("MathAPI", "add", "add", "add")
    backend = RealToolsBackend(BfclRealTools(["MathAPI"], {}))
    executor = ToolExecutor(ToolCatalog([spec, CatalogTool("MathAPI", "divide", "divide", "divide")]), backend)
    ok = await executor.execute(ToolCallRequest("1", "add", '{"a": 2, "b": 3}'))
    assert ok.outcome.ok and ok.outcome.content == '{"result": 5}' and ok.outcome.status is None
    failed = await executor.execute(ToolCallRequest("2", "divide", '{"a": 1, "b": 0}'))
    assert not failed.outcome.ok and failed.outcome.error_kind == "tool_error"
    assert backend.kind(spec) == "read"
