"""The CLI, including every example of gecko/convert/README.md."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gecko.convert.cli import main
from gecko.toolkits import load_toolkits
from tests.convert.convert_support import EXAMPLES_DIR, REPO_ROOT

README = REPO_ROOT / "gecko" / "convert" / "README.md"


def readme_commands() -> list[str]:
    """The command lines of the README's ```sh blocks."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_readme_has_examples_for_every_kind() -> None:
    kinds = {shlex.split(c)[3] for c in readme_commands()}
    assert kinds == {"openai", "bfcl", "mcp", "xlam", "python"}


def test_readme_examples_run_and_load(tmp_path: Path) -> None:
    (tmp_path / "gecko").symlink_to(REPO_ROOT / "gecko", target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for command in readme_commands():
        argv = shlex.split(command)
        assert argv[:3] == ["python", "-m", "gecko.convert"], command
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
    registry = load_toolkits([tmp_path / "toolkits"])
    assert set(registry.toolkits) == {"weather", "notes", "geometry", "finance", "shop", "orders"}
    assert registry.get("weather", "weather_current").original_name == "weather.current"
    assert registry.get("shop", "place_order").access == "write"
    assert registry.get("geometry", "geometry_distance").response_schema is not None


def test_stdout_and_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data = (EXAMPLES_DIR / "geometry.bfcl.jsonl").read_text()
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(data))
    assert main(["bfcl", "-", "--title", "geo"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["info"]["title"] == "geo"
    assert len(doc["paths"]) == 3


def test_per_entry_writes_one_toolkit_per_task(tmp_path: Path) -> None:
    entries = [
        {"id": "demo_0", "question": [], "function": [{"name": "f.a", "parameters": {"type": "dict", "properties": {}}}]},
        {"id": "demo_1", "question": [], "function": []},
    ]
    source = tmp_path / "tasks.jsonl"
    source.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    assert main(["bfcl", str(source), "--per-entry", "-o", str(tmp_path / "out")]) == 0
    registry = load_toolkits([tmp_path / "out"])
    assert set(registry.toolkits) == {"demo_0", "demo_1"}
    assert registry.get("demo_0", "f_a").original_name == "f.a"


@pytest.mark.parametrize(("argv", "message"), [
    (["openai", "missing.json"], "No such file"),
    (["python", "gecko.convert.examples.shop"], "expected module:function"),
    (["python", "gecko.convert.examples.nope:f"], "cannot import"),
    (["python", "gecko.convert.examples.shop:Order"], "not a function or method"),
    (["openai", str(EXAMPLES_DIR / "weather.openai.json"), "--access", "x=delete"], "TOOL=read"),
    (["openai", str(EXAMPLES_DIR / "weather.openai.json"), "--per-entry", "-o", "x"], "--per-entry needs the bfcl kind"),
    (["mcp", str(EXAMPLES_DIR / "weather.openai.json")], "a tool needs a non-empty 'name'"),
])
def test_errors_exit_1_with_a_message(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    assert message in capsys.readouterr().err


@pytest.mark.integration
def test_model_option_reaches_an_openai_compatible_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The local stub answers with schemas that fail the converter's checks: the tools keep the generic schema."""
    from utils.llm_stub import testing

    out = tmp_path / "weather.json"
    with testing.run_stub() as stub:
        argv = ["openai", str(EXAMPLES_DIR / "weather.openai.json"), "--model", stub.model(),
                "--cache-dir", str(tmp_path / "cache"), "-o", str(out)]
        assert main(argv) == 0
        assert stub.stats()["requests"] >= 2
        assert main([*argv, "--strict"]) == 1
    doc = json.loads(out.read_text())
    assert {op["post"]["x-gecko-response-origin"] for op in doc["paths"].values()} == {"generic"}
    assert "no result schema could be inferred for 2 tool(s)" in capsys.readouterr().err
