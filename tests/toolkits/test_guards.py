"""Hostile toolkit documents (issue 31.4, 31.6, 31.9): alias bombs, references outside the document, route names.

Each is refused with one line naming the file and the reason, without being expanded or read, and the other
toolkits load. The loads run in a child process with a time limit, so a regression fails instead of hanging.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from gecko.toolkits.guards import RESERVED_NAMES, check_document, expanded_nodes
from utils.paths import REPO_ROOT

HOSTILE = REPO_ROOT / "tests" / "data" / "hostile"
LOAD = """
import sys, time
from pathlib import Path
from gecko.toolkits.loader import ToolkitLoadError, load_toolkits
start = time.monotonic()
try:
    registry = load_toolkits([Path(sys.argv[1])], skip_invalid=sys.argv[2] == "skip")
    print("LOADED", sorted(registry.toolkits))
except ToolkitLoadError as exc:
    print("REFUSED", exc)
print("SECONDS", round(time.monotonic() - start, 2))
"""


def _load(directory: Path, skip: bool, timeout: float = 60) -> str:
    """stdout and stderr of a child process loading `directory` (fails the test if it takes over `timeout` s)."""
    try:
        done = subprocess.run([sys.executable, "-c", LOAD, str(directory), "skip" if skip else "strict"],
                              capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {directory} took over {timeout} s")
    return done.stdout + done.stderr


def test_an_alias_bomb_is_refused_in_one_line_and_the_others_load():
    out = _load(HOSTILE / "bomb", skip=True)
    assert "LOADED ['fine']" in out, out
    refused = [line for line in out.splitlines() if "bomb.yaml" in line]
    assert len(refused) == 1 and "expands to more than 1,000,000 JSON values" in refused[0], out
    strict = _load(HOSTILE / "bomb", skip=False)
    assert "REFUSED" in strict and "--max-toolkit-nodes" in strict, strict


def test_a_smaller_alias_bomb_is_refused_by_its_factor(tmp_path: Path):
    levels = ["x-l0: &l0 {type: string, description: lol}"]
    levels += [f"x-l{i}: &l{i} {{allOf: [{', '.join([f'*l{i - 1}'] * 9)}]}}" for i in range(1, 6)]
    (tmp_path / "five.yaml").write_text("\n".join(["openapi: 3.1.0", 'info: {title: five, version: "1"}', *levels,
                                                   "paths: {}", ""]))  # 400,000 values: under the node bound
    out = _load(tmp_path, skip=False, timeout=30)
    assert "REFUSED" in out and "YAML aliases multiply the document" in out and "an alias bomb" in out, out


def test_counting_stops_at_the_bound_even_for_a_self_referencing_alias():
    loop: list = []
    loop.append(loop)
    assert expanded_nodes(loop, 1000) == 1001
    doc = yaml.safe_load((HOSTILE / "bomb" / "bomb.yaml").read_text())
    start = time.monotonic()
    assert expanded_nodes(doc, 1_000_000) == 1_000_001 and time.monotonic() - start < 5


def test_a_file_reference_is_refused_without_reading_it(tmp_path: Path):
    shutil.copy(HOSTILE / "refs" / "passwd.yaml", tmp_path)
    out = _load(tmp_path, skip=False)
    assert "/components/schemas/Leak/$ref: 'file:///etc/passwd'" in out, out
    assert "root:" not in out


def test_a_named_pipe_reference_does_not_hang_the_loader(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.json")  # opening it for reading waits for a writer: forever
    ref = (tmp_path / "pipe.json").as_uri()
    doc = {"openapi": "3.1.0", "info": {"title": "pipe", "version": "1"},
           "components": {"schemas": {"Thing": {"$ref": ref}}},
           "paths": {"/p": {"post": {"operationId": "p", "responses": {"200": {"description": "ok"}},
                                     "requestBody": {"content": {"application/json": {
                                         "schema": {"$ref": "#/components/schemas/Thing"}}}}}}}}
    (tmp_path / "pipe.yaml").write_text(yaml.safe_dump(doc))
    out = _load(tmp_path, skip=True, timeout=30)
    assert "LOADED []" in out and f"/components/schemas/Thing/$ref: {ref!r}" in out, out


def test_a_remote_reference_is_never_fetched(tmp_path: Path):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    connections: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connections.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    doc = {"openapi": "3.1.0", "info": {"title": "remote", "version": "1"},
           "components": {"schemas": {"Pet": {"$ref": f"http://127.0.0.1:{port}/pet.json"},
                                      "Other": {"$id": f"http://127.0.0.1:{port}/base.json", "type": "object"}}},
           "paths": {}}
    (tmp_path / "remote.yaml").write_text(yaml.safe_dump(doc))
    try:
        out = _load(tmp_path, skip=False, timeout=30)
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
    assert "REFUSED" in out and f"http://127.0.0.1:{port}/pet.json" in out and "/components/schemas/Other/$id" in out
    assert connections == []


@pytest.mark.parametrize("name", ["health", "ui", "sessions", "mcp", "docs", "session-id"])
def test_a_toolkit_named_like_a_route_is_refused(tmp_path: Path, name: str):
    shutil.copy(HOSTILE / "bomb" / "fine.yaml", tmp_path / f"{name}.yaml")
    out = _load(tmp_path, skip=False, timeout=30)
    assert "REFUSED" in out and f"the toolkit name {name!r} is one of Gecko's own routes" in out, out


def test_reserved_names_cover_every_route_of_the_app(client):
    first = {route.path.split("/")[1] for route in client.app.routes if hasattr(route, "path")}
    own = {segment for segment in first if segment and not segment.startswith("{")}
    assert own <= RESERVED_NAMES, own - RESERVED_NAMES


def test_a_fragment_reference_and_a_relative_id_are_fine():
    doc = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},
           "components": {"schemas": {"A": {"$ref": "#/components/schemas/B"}, "B": {"$id": "b", "type": "string"}}}}
    check_document("fine", doc)
