"""xLAM / APIGen tool lists: type strings, optional parameters, dataset rows, the CLI and the server's loader."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gecko.convert import ConversionError, from_xlam
from gecko.convert.cli import main
from gecko.convert.xlam import type_schema, unique_functions, xlam_functions
from gecko.toolkits import ToolkitRegistry, load_toolkits
from tests.convert.convert_support import EXAMPLES_DIR


def body(doc: dict[str, Any], op_id: str) -> dict[str, Any]:
    return doc["paths"][f"/{op_id}"]["post"]["requestBody"]["content"]["application/json"]["schema"]


@pytest.mark.parametrize(("text", "schema"), [
    ("str", {"type": "string"}),
    ("INT", {"type": "integer"}),
    ("float", {"type": "number"}),
    ("bool", {"type": "boolean"}),
    ("List[int]", {"type": "array", "items": {"type": "integer"}}),
    ("list", {"type": "array"}),
    ("typing.List[str]", {"type": "array", "items": {"type": "string"}}),
    ("Set[str]", {"type": "array", "uniqueItems": True, "items": {"type": "string"}}),
    ("Tuple[int, str]", {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}),
    ("Tuple[float, ...]", {"type": "array", "items": {"type": "number"}}),
    ("Dict[str, List[int]]", {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer"}}}),
    ("dict", {"type": "object"}),
    ("Optional[float]", {"anyOf": [{"type": "number"}, {"type": "null"}]}),
    ("Union[int, str]", {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    ("int | None", {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    ("Literal['asc', 'desc']", {"enum": ["asc", "desc"]}),
    ("Any", {}),
    ("Callable[[int], int]", {}),
])
def test_type_strings(text: str, schema: dict[str, Any]) -> None:
    assert type_schema(text) == schema


def test_required_optional_and_defaults() -> None:
    tool = {"name": "quote", "description": "Quote.", "parameters": {
        "symbol": {"type": "str", "description": "Ticker", "default": "AAPL"},
        "exchange": {"type": "str, optional", "description": "Exchange"},
        "days": {"type": "int"},
        "limit": {"type": "Optional[int]"},
        "order": {"type": "str", "enum": ["asc", "desc"]},
    }}
    schema = body(from_xlam([tool], title="t"), "quote")
    assert schema["required"] == ["days", "order"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["symbol"] == {"type": "string", "description": "Ticker", "default": "AAPL"}
    assert schema["properties"]["exchange"] == {"type": "string", "description": "Exchange"}
    assert schema["properties"]["limit"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert schema["properties"]["order"]["enum"] == ["asc", "desc"]
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"days": 3, "order": "asc", "limit": None})
    assert not validator.is_valid({"days": "3", "order": "asc"})
    assert not validator.is_valid({"days": 3, "order": "asc", "extra": 1})


@pytest.mark.parametrize("shape", ["list", "string", "row", "rows", "single"])
def test_input_shapes(shape: str) -> None:
    tool = {"name": "ping", "description": "d", "parameters": {"host": {"type": "str"}}}
    data = {"list": [tool], "string": json.dumps([tool]), "row": {"query": "q", "tools": json.dumps([tool])}, "rows": [{"tools": [tool]}],
            "single": tool}[shape]
    assert [f["name"] for f in xlam_functions(data)] == ["ping"]


def test_json_schema_parameters_are_read_as_openai_or_bfcl() -> None:
    openai_style = {"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}
    bfcl_style = {"name": "b", "parameters": {"type": "dict", "properties": {"y": {"type": "float"}}, "required": ["y"]}}
    doc = from_xlam([openai_style, bfcl_style], title="t")
    assert body(doc, "a")["properties"]["x"] == {"type": "integer"}
    assert body(doc, "b")["properties"]["y"] == {"type": "number"}


@pytest.mark.parametrize(("data", "message"), [
    ("[{not json", "not valid JSON"),
    ([{"description": "no name"}], "non-empty 'name'"),
    ([{"name": "f", "parameters": {"x": "int"}}], "parameter 'x'"),
    ([{"name": "f", "parameters": ["x"]}], "'parameters' must be an object"),
])
def test_bad_input_is_a_clear_error(data: Any, message: str) -> None:
    with pytest.raises(ConversionError, match=message):
        from_xlam(data, title="t")


def test_unique_functions_drops_only_identical_repeats() -> None:
    a = {"name": "f", "parameters": {"x": {"type": "int"}}}
    b = {"name": "f", "parameters": {"x": {"type": "str"}}}
    assert unique_functions([a, dict(a), b]) == [a, b]


def test_example_dataset_converts_loads_and_accepts_its_answers(
    tmp_path: Path, load_docs: Callable[..., ToolkitRegistry],
) -> None:
    rows = [json.loads(line) for line in (EXAMPLES_DIR / "finance.xlam.jsonl").read_text().splitlines()]
    out = tmp_path / "finance.json"
    assert main(["xlam", str(EXAMPLES_DIR / "finance.xlam.jsonl"), "--title", "finance", "-o", str(out)]) == 0
    registry = load_toolkits([tmp_path])
    for row in rows:
        for answer in json.loads(row["answers"]):
            operation = registry.get("finance", answer["name"])
            assert operation.args_validator.is_valid(answer["arguments"]), answer
    assert not registry.get("finance", "moving_average").args_validator.is_valid({"prices": [1.0]})
