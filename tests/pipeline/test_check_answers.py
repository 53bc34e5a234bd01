"""`--check` synthesizes every operation's response and names each tool that could never answer (issue 33 item 5);
the synthesizer satisfies a real design tool's `getFile` (Figma's published schema: `allOf` parts that declare the
same property, a trait's `type: string` beside a node's `enum: [DOCUMENT]`)."""

from __future__ import annotations

import json
import shutil

from gecko.cli import main as serve_main
from gecko.toolkits import load_toolkits
from tests.conftest import TESTS_DIR
from utils.schema.instance import generate_instance, is_valid

FIGMA = TESTS_DIR / "data" / "vendor" / "figma_getfile.json"


def test_figma_get_file_response_is_synthesized(tmp_path):
    directory = tmp_path / "docs"
    directory.mkdir()
    shutil.copy(FIGMA, directory / "figma.json")
    op = load_toolkits([directory], cache_dir=tmp_path / "cache").get("figma", "getFile")
    for seed in ("a", "b", "c"):
        body = generate_instance(op.response_schema, seed)
        assert op.response_is_valid(body)
        assert body["document"]["type"] == "DOCUMENT"


def test_merged_all_of_keeps_both_declarations_of_a_property():
    schema = {"allOf": [{"type": "object", "properties": {"kind": {"type": "string", "enum": ["DOCUMENT"]}},
                         "required": ["kind"]},
                        {"type": "object", "properties": {"kind": {"type": "string"}, "name": {"type": "string"}}}]}
    value = generate_instance(schema, "seed")
    assert value["kind"] == "DOCUMENT" and is_valid(schema, value)


def _doc(response_schema: dict) -> dict:
    return {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "paths": {
        "/a": {"get": {"operationId": "fine", "responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}}}}}},
        "/b": {"get": {"operationId": "never", "responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": response_schema}}}}}}}}


def test_check_reports_each_tool_that_cannot_answer(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "t.json").write_text(json.dumps(_doc({"type": "integer", "minimum": 5, "maximum": 3})))
    code = serve_main(["--check", "--schemas-dir", str(tmp_path / "docs"), "--toolkit-cache-dir", str(tmp_path / "c"),
                       "--state-dir", str(tmp_path / "state"), "--log-level", "warning"])
    err = capsys.readouterr().err
    assert code == 2
    assert "t/never cannot answer" in err and "t/fine" not in err
    assert "1 of 2 tools can never answer" in err


def test_check_passes_when_every_response_can_be_synthesized(tmp_path, capsys):
    directory = tmp_path / "docs"
    directory.mkdir()
    shutil.copy(FIGMA, directory / "figma.json")
    code = serve_main(["--check", "--schemas-dir", str(directory), "--toolkit-cache-dir", str(tmp_path / "c"),
                       "--state-dir", str(tmp_path / "state"), "--log-level", "warning"])
    assert code == 0, capsys.readouterr().err
    assert "every response synthesized" in capsys.readouterr().out
