"""`gecko twin learn`: what captured real calls teach a converted twin (issue 32, items 6 and 7), on captures shaped
like those of real servers: a task tracker with in-band `{"error": …}` bodies and no output schema, and a knowledge
graph whose errors are `isError` messages. The end-to-end run against the real servers is tests/mcp/test_twin_learning.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gecko.convert import from_mcp
from gecko.toolkits import ToolkitRegistry
from gecko.twin.capture import Capture, capture_of, from_history, read_captures, resolve, write_captures
from gecko.twin.learn import learn_toolkit
from gecko.twin.outcome import classify

TASK_TOOLS = [
    {"name": "create_task", "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}},
                                            "required": ["title"]}},
    {"name": "get_task", "inputSchema": {"type": "object", "properties": {"task_id": {"type": "string"}},
                                         "required": ["task_id"]}},
    {"name": "archive_task", "inputSchema": {"type": "object", "properties": {"task_id": {"type": "string"}},
                                             "required": ["task_id"]}},
    {"name": "list_tasks", "inputSchema": {"type": "object", "properties": {}}},
]


def ok(value: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(value)}], "isError": False}


def task_captures() -> list[Capture]:
    calls = []
    for n in range(3):
        task = f"task-{n}a7f"
        calls += [
            capture_of("create_task", {"title": f"t{n}"}, ok({"success": True, "task_id": task})),
            capture_of("get_task", {"task_id": task}, ok({"id": task, "title": f"t{n}", "status": "todo"})),
            capture_of("get_task", {"task_id": f"nope-{n}"}, ok({"error": f"Task not found: nope-{n}"})),
            capture_of("archive_task", {"task_id": task}, ok({"success": True})),
        ]
    calls.append(capture_of("get_task", {"task_id": 5}, {"content": [{"type": "text", "text": json.dumps(
        {"error": '[{"code": "invalid_type", "expected": "string"}]'})}], "isError": True}))
    return calls


def post(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return doc["paths"][f"/{name}"]["post"]


def result_schema(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return post(doc, name)["responses"]["200"]["content"]["application/json"]["schema"]


def test_outcomes_of_real_results() -> None:
    assert classify(ok({"tasks": []})) == "ok"
    assert classify(ok({"error": "Task not found: x"})) == "error"
    assert classify(ok({"success": False})) == "error"
    assert classify(ok({"status": "error", "message": "no"})) == "error"
    assert classify({"content": [{"type": "text", "text": "Entity with name x not found"}], "isError": True}) == "error"
    assert classify({"content": [{"type": "text", "text": "MCP error -32602: Input validation error: Invalid "
                                                          "arguments for tool open_nodes"}], "isError": True}) \
        == "rejected"
    assert classify({"jsonrpc_error": "Unknown tool"}) == "rejected"


def test_learned_twin_of_a_server_without_output_schemas(load_docs: Callable[..., ToolkitRegistry]) -> None:
    before = from_mcp(TASK_TOOLS, title="tasks")
    assert post(before, "get_task")["x-gecko-response-origin"] == "generic"
    doc, report = learn_toolkit(before, task_captures())
    assert report.calls == 13

    create = post(doc, "create_task")
    assert result_schema(doc, "create_task")["properties"]["task_id"] == {"type": "string"}
    assert result_schema(doc, "create_task")["properties"]["success"] == {"type": "boolean", "const": True}
    assert create["x-gecko-ids"]["issues"] == ["task_id"]
    assert create["x-gecko-resource"] == {"resource": "task", "action": "create", "id_field": "task_id",
                                          "collection": "tasks"}
    assert create["x-gecko-learned"] == {"from": "capture", "calls": 3, "ok": 3, "error": 0, "rejected": 0,
                                         "result_schema": "genson over 3 results"}

    get = post(doc, "get_task")
    assert get["x-gecko-response-origin"] == "learned"
    assert get["x-gecko-ids"]["arguments"] == {"task_id": "create_task.task_id"}
    assert get["x-gecko-resource"] == {"resource": "task", "action": "read", "id": "task_id", "id_field": "task_id",
                                       "collection": "tasks"}
    assert get["x-gecko-access"] == "read" and get["x-gecko-provenance"]["access"].startswith("learned")
    convention = get["x-gecko-error-convention"]
    assert convention["kind"] == "body" and convention["not_found"] == "Task not found: {id}"
    success, error = result_schema(doc, "get_task")["anyOf"]
    assert set(success["properties"]) == {"id", "title", "status"} and error["required"] == ["error"]
    assert get["x-gecko-learned"]["rejected"] == 1

    assert post(doc, "archive_task")["x-gecko-resource"]["action"] == "update"
    assert "x-gecko-resource" not in post(doc, "list_tasks")
    assert doc["info"]["x-gecko-default-state"] == {"tasks": {}}, "the twin has issued no id yet: closed world"
    assert doc["info"]["x-gecko-learned"]["calls"] == 13

    registry = load_docs(tasks=doc)
    read = registry.get("tasks", "get_task")
    assert read.access == "read" and read.world is not None and read.world.resource is not None
    assert read.world.resource.action == "read" and read.world.resource.not_found is not None


def test_is_error_convention_declares_not_found(load_docs: Callable[..., ToolkitRegistry]) -> None:
    tools = [{"name": "create_entities", "inputSchema": {"type": "object", "properties": {"names": {
                  "type": "array", "items": {"type": "string"}}}}},
             {"name": "open_entity", "inputSchema": {"type": "object", "properties": {"entity_id": {"type": "string"}},
                                                     "required": ["entity_id"]},
              "annotations": {"readOnlyHint": True}}]
    missing = {"content": [{"type": "text", "text": "Entity with id e-404 not found"}], "isError": True}
    captures = [capture_of("create_entities", {"names": ["a"]}, ok({"created": [{"entity_id": "e-1", "name": "a"}],
                                                                     "entity_id": "e-1"})),
                capture_of("open_entity", {"entity_id": "e-1"}, ok({"entity_id": "e-1", "name": "a"})),
                capture_of("open_entity", {"entity_id": "e-404"}, missing)]
    doc, _ = learn_toolkit(from_mcp(tools, title="graph"), captures)
    open_entity = post(doc, "open_entity")
    assert open_entity["x-gecko-error-convention"]["kind"] == "isError"
    assert open_entity["x-gecko-error-convention"]["not_found"] == "Entity with id {id} not found"
    assert "404" in open_entity["responses"]
    assert open_entity["x-gecko-provenance"]["access"] == "annotations.readOnlyHint: true", "the server's word stays"
    op = load_docs(graph=doc).get("graph", "open_entity")
    assert op.not_found_declared and op.world is not None and op.world.resource is not None
    assert op.world.resource.action == "read"


def test_captures_round_trip_and_references(tmp_path: Path) -> None:
    captures = task_captures()
    write_captures(captures, tmp_path / "c.jsonl")
    assert read_captures(tmp_path / "c.jsonl") == captures
    assert resolve({"task_id": "{{0.task_id}}", "ids": ["{{1.items.0.id}}"], "n": 3},
                   [{"task_id": "t-1"}, {"items": [{"id": "x"}]}]) == {"task_id": "t-1", "ids": ["x"], "n": 3}


def test_captures_from_a_hybrid_session_history() -> None:
    history = [{"tool": "tasks/get_task", "arguments": {"task_id": "t"}, "source": "upstream",
                "response": {"id": "t"}, "upstream_error": False},
               {"tool": "tasks/create_task", "arguments": {"title": "x"}, "response": {"task_id": "s"}},
               {"tool": "tasks/get_task", "arguments": {"task_id": "u"}, "source": "upstream",
                "response": "Task u not found", "upstream_error": True}]
    captures = from_history(history, {"get_task": "get_task"})
    assert [(c.tool, c.outcome) for c in captures] == [("get_task", "ok"), ("get_task", "error")]
    assert captures[1].text == "Task u not found"


def test_a_count_sent_back_as_a_limit_is_no_id() -> None:
    tools = [{"name": "list_items", "inputSchema": {"type": "object", "properties": {"limit": {"type": "integer"}}}}]
    captures = [capture_of("list_items", {"limit": 1}, ok({"items": [], "total": 7})),
                capture_of("list_items", {"limit": 7}, ok({"items": [], "total": 0}))]
    doc, _ = learn_toolkit(from_mcp(tools, title="items"), captures)
    assert "x-gecko-resource" not in post(doc, "list_items")
    assert "x-gecko-ids" not in post(doc, "list_items")


def test_a_model_fills_only_what_no_capture_covers() -> None:
    from gecko.convert.infer import ResponseInferrer

    proposal = {"oneOf": [
        {"type": "object", "properties": {"tasks": {"type": "array", "description": "The tasks."}}},
        {"type": "object", "properties": {"error": {"type": "string", "description": "Why."}}, "required": ["error"]}]}
    asked: list[str] = []

    def infer(prompt: str, _schema: dict[str, Any]) -> dict[str, Any]:
        asked.append(prompt)
        return {"response_schema": proposal}

    doc, report = learn_toolkit(from_mcp(TASK_TOOLS, title="tasks"), task_captures(),
                                inferrer=ResponseInferrer(infer, model="fake"))
    assert len(asked) == 1 and "list_tasks" in asked[0], "only the tool no capture covers is inferred"
    assert result_schema(doc, "list_tasks") == proposal
    assert post(doc, "list_tasks")["x-gecko-response-origin"] == "inferred"
    assert post(doc, "get_task")["x-gecko-response-origin"] == "learned", "captured evidence wins"
    assert "result schema (model)" in report.tools["list_tasks"]


def test_a_read_by_its_arguments_whatever_its_verb(load_docs: Callable[..., ToolkitRegistry]) -> None:
    tools = [{"name": "request_planning", "inputSchema": {"type": "object", "properties": {
                 "title": {"type": "string"}}, "required": ["title"]}},
             {"name": "open_task_details", "inputSchema": {"type": "object", "properties": {
                 "taskId": {"type": "string"}}, "required": ["taskId"]}}]
    before = from_mcp(tools, title="planner")
    captures = [capture_of("request_planning", {"title": "a"}, ok({"taskId": "task-1f", "status": "planned"})),
                capture_of("open_task_details", {"taskId": "task-1f"}, ok({"taskId": "task-1f", "title": "a"})),
                capture_of("request_planning", {"title": "b"}, ok({"taskId": "task-2c", "status": "planned"})),
                capture_of("open_task_details", {"taskId": "task-2c"}, ok({"taskId": "task-2c", "title": "b"}))]
    doc, _ = learn_toolkit(before, captures)
    assert post(doc, "open_task_details")["x-gecko-resource"]["action"] == "read"
    op = load_docs(planner=doc).get("planner", "open_task_details")
    assert op.access == "read" and op.world is not None and op.world.resource is not None
    assert op.world.resource.action == "read" and op.world.resource.id_argument == "taskId"


def test_learning_again_from_more_captures_replaces_what_was_learned() -> None:
    first, _ = learn_toolkit(from_mcp(TASK_TOOLS, title="tasks"), task_captures())
    more = [capture_of("get_task", {"task_id": "task-0a7f"}, ok({"id": "task-0a7f", "title": "t", "status": "todo",
                                                                 "priority": "P1"}))]
    again, _ = learn_toolkit(first, task_captures() + more)
    *shapes, error = result_schema(again, "get_task")["anyOf"]
    assert [sorted(b["required"]) for b in shapes] == [["id", "status", "title"], ["id", "priority", "status", "title"]]
    assert error["required"] == ["error"]
    assert post(again, "get_task")["x-gecko-learned"]["calls"] == 8
    assert learn_toolkit(again, task_captures() + more)[0] == again, "learning is deterministic"


def test_cli_refuses_what_it_cannot_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gecko.twin.cli import main

    (tmp_path / "kit.json").write_text("[1]")
    (tmp_path / "c.jsonl").write_text('{"tool": "t", "arguments": {}, "outcome": "ok", "result": {}}\n')
    assert main(["learn", str(tmp_path / "kit.json"), "--captures", str(tmp_path / "c.jsonl")]) == 1
    assert "not a toolkit" in capsys.readouterr().err
    (tmp_path / "bad.jsonl").write_text("{nope\n")
    (tmp_path / "ok.json").write_text(json.dumps(from_mcp(TASK_TOOLS, title="tasks")))
    assert main(["learn", str(tmp_path / "ok.json"), "--captures", str(tmp_path / "bad.jsonl")]) == 1
    assert "bad.jsonl:1: not JSON" in capsys.readouterr().err
    assert main(["capture", "--calls", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "x.jsonl")]) == 1
    assert "give --server" in capsys.readouterr().err
