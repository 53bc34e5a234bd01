"""Document shape, determinism, validation, and the LLM inference path (with a fake model)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from gecko.convert import (
    GENERIC_RESPONSE,
    ConversionError,
    Prompt,
    ResponseInferrer,
    ToolSpec,
    build_document,
    dump_document,
    from_bfcl,
    from_openai,
    schema_problems,
    toolkit_document,
    validate_document,
    write_document,
)
from gecko.convert.model import ToolkitSpec

TOOLS = [
    {"name": "b.second", "description": "Second.", "parameters": {"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "integer"}}}},
    {"name": "a.first", "description": "First.", "parameters": {"type": "object", "properties": {}}},
]
GOOD_SCHEMA = {
    "oneOf": [
        {"type": "object", "properties": {"total": {"type": "number", "description": "Sum in EUR."}},
         "required": ["total"], "additionalProperties": False},
        {"type": "object", "properties": {"error": {"type": "string", "description": "Why it failed."}},
         "required": ["error"], "additionalProperties": False},
    ]
}


def test_shape_of_an_operation() -> None:
    doc = from_openai(TOOLS, title="kit", description="Two tools.", version="2.0")
    assert doc["openapi"] == "3.1.0"
    assert doc["info"] == {"title": "kit", "version": "2.0", "description": "Two tools."}
    assert list(doc["paths"]) == ["/b_second", "/a_first"]
    op = doc["paths"]["/b_second"]["post"]
    assert list(op) == ["operationId", "description", "x-gecko-original-name", "x-gecko-response-origin",
                        "x-gecko-provenance", "requestBody", "responses"]
    assert set(op["x-gecko-provenance"]) == {"arguments", "response"}
    assert op["requestBody"]["required"] is True
    assert list(op["requestBody"]["content"]) == ["application/json"]
    assert list(op["responses"]) == ["200"]
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == GENERIC_RESPONSE
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    assert list(schema["properties"]) == ["z", "a"]


def test_same_input_same_bytes() -> None:
    first = dump_document(from_openai(copy.deepcopy(TOOLS), title="kit"))
    second = dump_document(from_openai(copy.deepcopy(TOOLS), title="kit"))
    assert first == second
    assert first.endswith("}\n")
    assert json.loads(first)["paths"]["/a_first"]["post"]["x-gecko-original-name"] == "a.first"


def test_write_document_is_atomic_and_deterministic(tmp_path: Path) -> None:
    doc = from_openai(TOOLS, title="kit")
    write_document(doc, tmp_path / "kit.json")
    write_document(doc, tmp_path / "kit.json")
    assert [p.name for p in tmp_path.iterdir()] == ["kit.json"]
    assert (tmp_path / "kit.json").read_text(encoding="utf-8") == dump_document(doc)


def test_info_extensions_and_empty_toolkits() -> None:
    doc = toolkit_document([], title="empty", info_extensions={"x-gecko-default-state": {"n": 1}})
    assert doc["paths"] == {}
    assert doc["info"]["x-gecko-default-state"] == {"n": 1}
    with pytest.raises(ConversionError, match="must start with 'x-'"):
        toolkit_document([], title="bad", info_extensions={"state": {}})


def test_validation_reports_the_problem() -> None:
    doc = build_document(ToolkitSpec(title="t", tools=(ToolSpec(name="f"),)))
    doc["paths"]["/f"]["post"]["responses"] = {"200": {"content": {}}}
    with pytest.raises(ConversionError, match="not a valid OpenAPI document"):
        validate_document(doc)


def test_unicode_is_written_as_is() -> None:
    doc = from_bfcl({"name": "météo", "description": "Température à Lyon", "parameters": {"type": "dict", "properties": {}}}, title="m")
    text = dump_document(doc)
    assert "Température à Lyon" in text and "m_t_o" in text


# -- LLM-inferred result schemas ---------------------------------------------------------------


class FakeModel:
    """Plays scripted answers and records the prompts it was given."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        assert schema["required"] == ["response_schema"]
        self.prompts.append(prompt)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_inferred_schema_is_used_and_cached(tmp_path: Path) -> None:
    model = FakeModel({"response_schema": GOOD_SCHEMA})
    doc = from_openai(TOOLS[:1], title="kit", inferrer=ResponseInferrer(model, model="fake", cache_dir=tmp_path))
    op = doc["paths"]["/b_second"]["post"]
    assert op["x-gecko-response-origin"] == "inferred"
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == GOOD_SCHEMA
    assert "b.second" in model.prompts[0] and '"z"' in model.prompts[0]
    again = FakeModel()
    assert from_openai(TOOLS[:1], title="kit", inferrer=ResponseInferrer(again, model="fake", cache_dir=tmp_path)) == doc
    assert again.prompts == []
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_a_rejected_schema_is_retried_with_its_problems(tmp_path: Path) -> None:
    bad = {"type": "object", "properties": {"total": {"type": "number"}}}
    model = FakeModel({"response_schema": bad}, {"response_schema": GOOD_SCHEMA})
    inferrer = ResponseInferrer(model, model="fake", cache_dir=tmp_path)
    doc = from_openai(TOOLS[:1], title="kit", inferrer=inferrer)
    assert doc["paths"]["/b_second"]["post"]["x-gecko-response-origin"] == "inferred"
    assert "rejected" in model.prompts[1] and "oneOf" in model.prompts[1]
    assert inferrer.failures == []


def test_failures_fall_back_to_the_generic_schema_and_are_not_cached(tmp_path: Path) -> None:
    model = FakeModel({"response_schema": {"type": "object"}}, {"nothing": 1}, RuntimeError("timeout"))
    inferrer = ResponseInferrer(model, model="fake", cache_dir=tmp_path)
    doc = from_openai(TOOLS, title="kit", inferrer=inferrer)
    for op_id in ("b_second", "a_first"):
        assert doc["paths"][f"/{op_id}"]["post"]["x-gecko-response-origin"] == "generic"
    assert inferrer.failures == ["b.second", "a.first"]
    assert list(tmp_path.iterdir()) == []


def test_strict_inference_raises() -> None:
    inferrer = ResponseInferrer(FakeModel(RuntimeError("down")), model="fake", strict=True)
    with pytest.raises(ConversionError, match="inference failed"):
        from_openai(TOOLS[:1], title="kit", inferrer=inferrer)


def test_declared_results_are_not_inferred() -> None:
    model = FakeModel()
    doc = from_bfcl({"name": "f", "parameters": {"type": "dict", "properties": {}},
                     "response": {"type": "dict", "properties": {}}}, title="t",
                    inferrer=ResponseInferrer(model, model="fake"))
    assert doc["paths"]["/f"]["post"]["x-gecko-response-origin"] == "source"
    assert model.prompts == []


@pytest.mark.parametrize(("schema", "problem"), [
    ({"type": "object"}, "oneOf"),
    ({"oneOf": [{"type": "object"}]}, "oneOf"),
    ({"oneOf": [{"$ref": "#/x"}, {"type": "object"}]}, "$ref"),
    ({"oneOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "object"}]}, "no description: /oneOf/0/properties/a"),
    ({"oneOf": [{"type": "object", "$defs": {"A": {}}}, {"type": "object"}]}, "$defs"),
    ({"oneOf": [{"type": "wrong"}, {"type": "object"}]}, "not a valid JSON Schema"),
    ([1], "JSON object"),
])
def test_schema_problems(schema: Any, problem: str) -> None:
    assert any(problem in p for p in schema_problems(schema)), schema_problems(schema)


def test_good_schema_has_no_problems_and_prompt_has_a_version() -> None:
    assert schema_problems(GOOD_SCHEMA) == []
    prompt = Prompt.load()
    assert len(prompt.version) == 12
    assert "$tool_name" not in prompt.render(ToolSpec(name="x"), {})
