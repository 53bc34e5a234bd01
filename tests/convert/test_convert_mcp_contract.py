"""`gecko convert mcp` keeps the server's contract: arguments exactly as declared, access from the annotations, and
what it added or inferred named under `x-gecko-provenance` (issue 32, items 4 and 5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gecko.convert import from_mcp, from_openai
from gecko.toolkits import ToolkitRegistry

OPEN = {"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        "required": ["names"]}


def post(doc: dict[str, Any], op_id: str) -> dict[str, Any]:
    return doc["paths"][f"/{op_id}"]["post"]


def body(doc: dict[str, Any], op_id: str) -> dict[str, Any]:
    return post(doc, op_id)["requestBody"]["content"]["application/json"]["schema"]


def test_mcp_input_schema_is_not_tightened(load_docs: Callable[..., ToolkitRegistry]) -> None:
    doc = from_mcp([{"name": "open_nodes", "inputSchema": OPEN}], title="memory")
    assert body(doc, "open_nodes") == OPEN, "the converter added a constraint the server did not state"
    op = load_docs(memory=doc).get("memory", "open_nodes")
    assert op.args_validator.is_valid({"names": ["a"], "trace": "x"}), "an extra argument the source allows"
    assert not op.args_validator.is_valid({"names": "a"})


def test_mcp_stated_closure_is_kept() -> None:
    closed = {**OPEN, "additionalProperties": False}
    assert body(from_mcp([{"name": "t", "inputSchema": closed}], title="x"), "t") == closed


def test_other_formats_record_that_they_closed_the_arguments() -> None:
    doc = from_openai({"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}},
                      title="t")
    assert body(doc, "f")["additionalProperties"] is False
    assert "closed by the converter" in post(doc, "f")["x-gecko-provenance"]["arguments"]


def test_access_from_annotations_with_its_reason(load_docs: Callable[..., ToolkitRegistry]) -> None:
    tools = [
        # "open" is a create verb by name; the server says it only reads
        {"name": "open_nodes", "inputSchema": OPEN, "annotations": {"readOnlyHint": True, "idempotentHint": True}},
        # "get" is a read verb by name; the server says it writes
        {"name": "get_or_create_user", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": False}},
        {"name": "list_purge", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": True}},
        {"name": "show_x", "inputSchema": {"type": "object"}},
    ]
    doc = from_mcp(tools, title="kit")
    assert post(doc, "open_nodes")["x-gecko-access"] == "read"
    assert post(doc, "open_nodes")["x-gecko-provenance"]["access"] == "annotations.readOnlyHint: true"
    assert post(doc, "get_or_create_user")["x-gecko-access"] == "write"
    assert post(doc, "list_purge")["x-gecko-access"] == "write"
    assert post(doc, "list_purge")["x-gecko-provenance"]["access"] == "annotations.destructiveHint: true"
    assert "access" not in post(doc, "show_x").get("x-gecko-provenance", {})
    assert post(doc, "show_x")["x-gecko-provenance"]["response"].startswith("generic")
    registry = load_docs(kit=doc)
    assert registry.get("kit", "open_nodes").access == "read"
    assert registry.get("kit", "get_or_create_user").access == "write"
    assert registry.get("kit", "list_purge").access == "write"
