"""The stub over real HTTP: stages, schemas, faults, planner scripts, stats, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from utils.llm import stage_tags as tags
from utils.llm_stub import FaultRates, StubConfig
from utils.llm_stub.config import parse_latency
from utils.llm_stub.testing import StubHandle, run_stub, run_stub_process
from utils.schema.instance import is_valid

HTTP = httpx.Client(timeout=10)
"""One client for the module: building a client per request costs ~50 ms (TLS context)."""


def post(stub: StubHandle, body: dict[str, Any], role: str | None = None) -> httpx.Response:
    headers = {tags.ROLE_HEADER: role} if role else {}
    return HTTP.post(stub.base_url + "/chat/completions", json=body, headers=headers)


def system(*sections: tuple[str, Any]) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Instructions."},
            {"role": "user", "content": "\n".join(tags.section(n, v) for n, v in sections)}]


def json_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def content(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return json.loads(response.json()["choices"][0]["message"]["content"])


def test_models_and_health(stub: StubHandle) -> None:
    assert HTTP.get(stub.base_url + "/models").json()["data"][0]["id"] == "stub"
    assert HTTP.get(stub.url + "/health").json() == {"status": "ok"}


def test_semantic_verdicts(stub: StubHandle) -> None:
    schema = {"type": "object", "properties": {"valid": {"type": "boolean"},
                                               "errors": {"type": "array", "items": {"type": "string"}}},
              "required": ["valid"]}
    ok = content(post(stub, {"model": "m", "messages": system(("arguments", {"a": 1})),
                             "response_format": json_schema("v", schema)}, "validator"))
    bad = content(post(stub, {"model": "m", "messages": system(("arguments", {"a": "stub-reject"})),
                              "response_format": json_schema("v", schema)}, "validator"))
    assert ok == {"valid": True, "errors": []}
    assert bad["valid"] is False and bad["errors"]


def test_response_fits_schema_from_json_schema_or_prompt_and_echoes_arguments(stub: StubHandle) -> None:
    schema = {"type": "object", "properties": {"response": {"type": "object", "properties": {
        "id": {"type": "string", "format": "uuid"}, "title": {"type": "string"}}, "required": ["id", "title"]}},
        "required": ["response"]}
    messages = system(("arguments", {"title": "Groceries"}))
    first = content(post(stub, {"model": "m", "messages": messages, "response_format": json_schema("r", schema)},
                         "responder"))
    assert is_valid(schema, first) and first["response"]["title"] == "Groceries"
    in_prompt = [{"role": "system", "content": messages[0]["content"] + "\n" + tags.section(tags.SCHEMA_SECTION, schema)},
                 messages[1]]
    second = content(post(stub, {"model": "m", "messages": in_prompt, "response_format": {"type": "json_object"}},
                          "responder"))
    assert second == first
    again = content(post(stub, {"model": "m", "messages": messages, "response_format": json_schema("r", schema)},
                         "responder"))
    assert again == first


def test_state_patch_bootstrap_checklist_and_judge(stub: StubHandle) -> None:
    patch = content(post(stub, {"model": "m", "response_format": {"type": "json_object"}, "messages": system(
        ("state", {"stub_writes": [{}]}), ("call", {"tool": "t/x", "arguments": {"a": 1}}))}, "state"))
    assert patch["patch"] == [{"op": "add", "path": "/stub_writes/-", "value": {"tool": "t/x", "arguments": {"a": 1}}}]
    boot = content(post(stub, {"model": "m", "response_format": {"type": "json_object"},
                               "messages": system(("state", {}))}, "bootstrap"))
    assert boot["patch"][0]["path"] == "/stub_bootstrap"
    checklist = content(post(stub, {"model": "m", "response_format": {"type": "json_object"}, "messages": system(
        ("task", "Create a note called A and then delete note B."))}, "checklist"))
    assert [i["description"] for i in checklist["items"]] == ["Create a note called A", "Delete note B"]
    verdict = content(post(stub, {"model": "m", "response_format": {"type": "json_object"}, "messages": system(
        ("checklist", [{"id": "1", "description": "x"}, {"id": "2", "description": "y stub-fail"}]))}, "judge"))
    assert [(i["id"], i["status"]) for i in verdict["items"]] == [("1", "success"), ("2", "failed")]


def test_stage_from_schema_name_when_no_header(stub: StubHandle) -> None:
    schema = {"type": "object", "properties": {"items": {"type": "array"}}, "required": ["items"]}
    messages = [{"role": "user", "content": tags.section("task", "Book a table")}]
    before = stub.stats()["by_stage"].get("checklist", 0)
    content(post(stub, {"model": "m", "messages": messages,
                        "response_format": json_schema(tags.schema_name("checklist"), schema)}))
    assert stub.stats()["by_stage"]["checklist"] == before + 1


def test_client_roles_fall_through_to_request_clues(stub: StubHandle) -> None:
    stub.reset_stats()
    reply = post(stub, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "user").json()
    assert reply["choices"][0]["message"]["content"] == "stub reply: hi"
    post(stub, {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}, "agent")
    assert stub.stats()["by_stage"] == {"chat": 1, "planner": 1}


TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}},
    {"type": "function", "function": {"name": "book", "parameters": {"type": "object"}}}]


def test_planner_default_plan_calls_first_tool_then_answers(stub: StubHandle) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "find x"}]
    first = post(stub, {"model": "m", "messages": messages, "tools": TOOLS}).json()["choices"][0]
    assert first["finish_reason"] == "tool_calls"
    call = first["message"]["tool_calls"][0]
    assert call["function"]["name"] == "search" and "q" in json.loads(call["function"]["arguments"])
    messages += [first["message"], {"role": "tool", "tool_call_id": call["id"], "content": "{}"}]
    final = post(stub, {"model": "m", "messages": messages, "tools": TOOLS}).json()["choices"][0]
    assert final["finish_reason"] == "stop" and final["message"]["content"] == "Done."
    forced = post(stub, {"model": "m", "messages": messages[:1], "tools": TOOLS,
                         "tool_choice": {"type": "function", "function": {"name": "book"}}}).json()
    assert forced["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "book"


def test_planner_follows_scripted_plans(tmp_path: Path) -> None:
    script = {"plans": [
        {"match": "refund", "steps": [{"tool_calls": [{"name": "book", "arguments": {"id": 7}}]},
                                       {"content": "Refunded."}]},
        {"steps": [{"content": "Nothing to do."}]},
    ]}
    from utils.llm_stub.config import load_plans

    path = tmp_path / "plan.json"
    path.write_text(json.dumps(script))
    with run_stub(StubConfig(plans=load_plans(path))) as stub:
        msgs: list[dict[str, Any]] = [{"role": "user", "content": "please refund order 7"}]
        step0 = post(stub, {"model": "m", "messages": msgs, "tools": TOOLS}).json()["choices"][0]["message"]
        assert json.loads(step0["tool_calls"][0]["function"]["arguments"]) == {"id": 7}
        msgs += [step0, {"role": "tool", "tool_call_id": step0["tool_calls"][0]["id"], "content": "ok"}]
        step1 = post(stub, {"model": "m", "messages": msgs, "tools": TOOLS}).json()["choices"][0]["message"]
        assert step1["content"] == "Refunded."
        other = post(stub, {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}).json()
        assert other["choices"][0]["message"]["content"] == "Nothing to do."
        inline = post(stub, {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS,
                             "stub_plan": {"steps": [{"tool_calls": [{"name": "search", "arguments": {"q": "z"}}]}]}})
        assert inline.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "search"


def test_usage_in_every_reply_and_stats(stub: StubHandle) -> None:
    stub.reset_stats()
    body = post(stub, {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}).json()
    assert body["usage"]["prompt_tokens"] > 0 and body["usage"]["completion_tokens"] > 0
    stats = stub.stats()
    assert stats["requests"] == 1 and stats["by_stage"] == {"chat": 1} and stats["statuses"] == {"200": 1}


def test_fault_injection_is_seeded_and_shaped() -> None:
    config = StubConfig(faults=FaultRates(rate_limit=0.25, server_error=0.25, malformed=0.25, schema_violation=0.25),
                        seed=7, retry_after_s=2)
    schema = {"type": "object", "properties": {"valid": {"type": "boolean"}}, "required": ["valid"]}

    def run() -> list[tuple[int, str]]:
        outcomes = []
        with run_stub(config) as stub:
            for i in range(40):
                r = post(stub, {"model": "m", "messages": system(("arguments", {"i": i})),
                                "response_format": json_schema("v", schema)}, "validator")
                if r.status_code == 429:
                    assert r.headers["retry-after"] == "2"
                if r.status_code != 200:
                    outcomes.append((r.status_code, r.json()["error"]["type"]))
                    continue
                text = r.json()["choices"][0]["message"]["content"]
                try:
                    kind = "ok" if is_valid(schema, json.loads(text)) else "violation"
                except ValueError:
                    kind = "malformed"
                outcomes.append((200, kind))
            assert sum(stub.stats()["faults"].values()) == 40
        return outcomes

    first = run()
    assert first == run()
    assert {o for o in first} == {(429, "rate_limit_exceeded"), (500, "server_error"), (200, "malformed"),
                                  (200, "violation")}


def test_latency_parsing() -> None:
    assert parse_latency("500") == (500.0, 500.0)
    assert parse_latency("10-30") == (10.0, 30.0)
    with pytest.raises(ValueError):
        parse_latency("30-10")
    with pytest.raises(ValueError):
        FaultRates(timeout=0.7, server_error=0.7)


def test_cli_process_prints_ready_and_serves() -> None:
    with run_stub_process(["--latency-ms", "1-2", "--fault-rate", "0"]) as stub:
        assert HTTP.get(stub.base_url + "/models").status_code == 200
        assert post(stub, {"model": "m", "messages": [{"role": "user", "content": "x"}]}).status_code == 200
