"""JSON-RPC errors Gecko answers itself (issue 31.9): unknown methods (-32601), unparsable messages (-32700) on
HTTP and stdio, and stdio lines longer than the body limit (skipped as they arrive, not read whole)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from queue import Empty, Queue

import pytest

from tests.conftest import TOOLKITS_DIR
from utils.paths import REPO_ROOT

MCP = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
HUGE_INTEGER = "9" * 5000


def test_http_unknown_method_and_unparsable_integer(client):
    sid = client.post("/mcp", json=INIT, headers=MCP).headers["mcp-session-id"]
    headers = {**MCP, "mcp-session-id": sid}
    unknown = client.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "foo/bar", "params": {}}, headers=headers)
    assert unknown.json()["error"]["code"] == -32601 and unknown.json()["id"] == 2
    body = ('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notes__create_note","arguments":'
            '{"title":' + HUGE_INTEGER + '}}}')
    reply = client.post("/mcp", content=body, headers={**headers, "Content-Type": "application/json"})
    assert reply.status_code == 400 and reply.json()["error"]["code"] == -32700  # was a 500
    assert client.post("/mcp", content=b"{not json", headers={**headers, "Content-Type": "application/json"}
                       ).json()["error"]["code"] == -32700


@pytest.fixture
def stdio(tmp_path: Path):
    """`python -m gecko.mcp` with a 64 KiB line limit; yields (send a line, next answer)."""
    proc = subprocess.Popen([sys.executable, "-m", "gecko.mcp", "--toolkit", "notes", "--schemas-dir", str(TOOLKITS_DIR),
                             "--state-dir", str(tmp_path), "--max-body-bytes", "65536"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO_ROOT)
    answers: Queue[bytes] = Queue()

    def pump() -> None:
        for line in proc.stdout:
            answers.put(line)

    threading.Thread(target=pump, daemon=True).start()

    def send(line: bytes) -> None:
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()

    def answer() -> dict:
        try:
            return json.loads(answers.get(timeout=60))
        except Empty:
            pytest.fail("no answer within 60 s")

    yield send, answer
    proc.stdin.close()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_stdio_answers_bad_lines_with_json_rpc_errors(stdio):
    send, answer = stdio
    send(b"this is not json")
    assert answer()["error"]["code"] == -32700  # was a notifications/message
    send(b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":' + HUGE_INTEGER.encode() + b"}}")
    assert answer()["error"]["code"] == -32700
    send(b'{"jsonrpc":"2.0","id":6,"method":"x":"' + b"a" * 200_000 + b'"}')
    too_long = answer()
    assert too_long["error"]["code"] == -32600 and "65536" in too_long["error"]["message"]
    send(json.dumps(INIT).encode())
    assert answer()["result"]["serverInfo"]
    send(b'{"jsonrpc":"2.0","id":7,"method":"foo/bar"}')
    assert answer() == {"jsonrpc": "2.0", "id": 7, "error": {
        "code": -32601, "message": "Method not found: 'foo/bar' is not an MCP method this server implements"}}
    send(b'{"jsonrpc":"2.0","id":8,"method":"ping"}')
    assert answer() == {"jsonrpc": "2.0", "id": 8, "result": {}}
