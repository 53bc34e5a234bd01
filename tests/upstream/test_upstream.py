"""Hybrid and passthrough sessions against a real HTTP service; upstream declarations; failures fail closed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import yaml
from fastapi import FastAPI, Request, Response

from gecko.upstream.spec import (
    HttpUpstream,
    McpHttpUpstream,
    McpStdioUpstream,
    UpstreamSpecError,
    parse_upstream,
)
from utils.paths import EXAMPLE_TOOLKITS_DIR
from utils.procs import free_port

DEEP_PET = 4242


def test_upstream_forms():
    assert parse_upstream("https://api.example.com/v1") == HttpUpstream(base_url="https://api.example.com/v1")
    assert parse_upstream("npx -y '@scope/server' '/tmp/a dir'") == McpStdioUpstream(
        command="npx", args=("-y", "@scope/server", "/tmp/a dir"))
    assert parse_upstream({"type": "mcp-http", "url": "http://127.0.0.1:9/mcp"}) == McpHttpUpstream(
        url="http://127.0.0.1:9/mcp")
    for bad in ({"type": "ftp", "url": "x"}, {"type": "http", "base_url": "file:///etc"}, "", {"type": "mcp-stdio"}):
        with pytest.raises(UpstreamSpecError):
            parse_upstream(bad)


@pytest.fixture(scope="module")
def real_pets() -> Iterator[tuple[str, list[dict]]]:
    """A real petstore on a loopback port; records every request it serves."""
    seen: list[dict] = []
    app = FastAPI()

    @app.get("/api/pets/{pet_id}")
    async def show(pet_id: int, request: Request) -> Any:
        seen.append({"method": "GET", "path": request.url.path})
        if pet_id == DEEP_PET:  # a real service gone wrong: an answer nested 300 levels deep
            return Response('{"id":1,"name":"deep","species":"dog","x":' + '[' * 300 + ']' * 300 + '}',
                            media_type="application/json")
        return {"id": pet_id, "name": "Rex (real)", "species": "dog"}

    @app.get("/api/pets")
    async def listing(request: Request) -> list[dict]:
        seen.append({"method": "GET", "path": request.url.path, "query": dict(request.query_params)})
        return [{"id": 1, "name": "Rex (real)", "species": "dog"}]

    @app.post("/api/pets", status_code=201)
    async def create(request: Request) -> dict:
        seen.append({"method": "POST", "path": request.url.path, "body": await request.json()})
        return {"id": 99, "name": "created for real", "species": "cat"}

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/api", seen
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def pets_toolkits(tmp_path: Path, real_pets) -> Path:
    doc = yaml.safe_load((EXAMPLE_TOOLKITS_DIR / "petstore.yaml").read_text())
    doc["info"]["x-gecko-upstream"] = real_pets[0]
    (tmp_path / "kits").mkdir()
    (tmp_path / "kits" / "petstore.yaml").write_text(yaml.safe_dump(doc))
    broken = {"openapi": "3.1.0", "info": {"title": "broken", "version": "1",
                                           "x-gecko-upstream": "/nonexistent/mcp-server --flag"},
              "paths": {"/get_thing": {"post": {"operationId": "get_thing", "responses": {"200": {"description": "ok"}}}}}}
    (tmp_path / "kits" / "broken.yaml").write_text(yaml.safe_dump(broken))
    return tmp_path / "kits"


def _session(client, mode: str) -> dict[str, str]:
    reply = client.post("/sessions", json={"config": {"mode": mode}})
    assert reply.status_code == 201, reply.text
    return {"X-Session-ID": reply.json()["session_id"]}


def test_hybrid_forwards_reads_to_the_http_api_and_simulates_writes(make_client, pets_toolkits, real_pets):
    client = make_client(schemas_dirs=[pets_toolkits], allow_upstream=["*"])
    seen = real_pets[1]
    seen.clear()
    headers = _session(client, "hybrid")
    one = client.get("/petstore/pets/7", headers=headers)
    assert one.status_code == 200 and one.json()["name"] == "Rex (real)" and one.headers["X-Gecko-Source"] == "upstream"
    page = client.get("/petstore/pets?limit=2&species=dog", headers=headers)
    assert page.json() == [{"id": 1, "name": "Rex (real)", "species": "dog"}]
    created = client.post("/petstore/createPet", json={"name": "Tom", "species": "cat"}, headers=headers)
    assert created.status_code == 201 and "X-Gecko-Source" not in created.headers  # createPet declares 201
    bad = client.get("/petstore/pets/0", headers=headers)
    assert bad.status_code == 422, "arguments are validated before anything reaches the real service"
    assert seen == [{"method": "GET", "path": "/api/pets/7"},
                    {"method": "GET", "path": "/api/pets", "query": {"limit": "2", "species": "dog"}}]
    now = client.get("/get-session-state", headers=headers).json()
    state = now["state"]
    pets = state["petstore"]["pets"]  # the world model: the real reads' records, then the simulated create
    assert pets["7"]["name"] == pets["1"]["name"] == "Rex (real)"
    assert [p["name"] for p in pets.values()] == ["Rex (real)", "Rex (real)", "Tom"]
    sid = headers["X-Session-ID"]
    versions = [client.get(f"/sessions/{sid}/state", params={"version": v}).json()["state"]
                for v in range(now["version"] + 1)]  # real results are stored as deltas: each version reads back
    assert versions[-1] == state and versions[0] == {} and list(versions[1]["petstore"]["pets"]) == ["7"]


def test_passthrough_sends_writes_too_and_refuses_toolkits_without_upstream(make_client, pets_toolkits, real_pets,
                                                                             toolkits_dir):
    client = make_client(schemas_dirs=[pets_toolkits, toolkits_dir], allow_upstream=["petstore"])
    real_pets[1].clear()
    headers = _session(client, "passthrough")
    created = client.post("/petstore/createPet", json={"name": "Tom", "species": "cat"}, headers=headers)
    assert created.status_code == 201 and created.json()["name"] == "created for real"
    assert real_pets[1] == [{"method": "POST", "path": "/api/pets", "body": {"name": "Tom", "species": "cat"}}]
    refused = client.post("/notes/create_note", json={"title": "t", "body": "b"}, headers=headers)
    assert refused.status_code == 409 and "declares no x-gecko-upstream" in refused.json()["detail"]
    simulated = client.post("/notes/create_note", json={"title": "t", "body": "b"}, headers=_session(client, "hybrid"))
    assert simulated.status_code == 200


def test_a_dead_upstream_is_a_502_never_a_simulated_answer(make_client, pets_toolkits):
    client = make_client(schemas_dirs=[pets_toolkits], upstream_timeout_s=10, allow_upstream=["broken"])
    headers = _session(client, "hybrid")
    reply = client.post("/broken/get_thing", json={}, headers=headers)
    assert reply.status_code == 502 and "/nonexistent/mcp-server" in reply.json()["detail"]
    assert client.get("/get-session-state", headers=headers).json() == {"state": {}, "version": 0}


def test_a_bad_upstream_declaration_stops_loading(tmp_path):
    from gecko.toolkits.loader import ToolkitLoadError, load_toolkits

    doc = {"openapi": "3.1.0", "info": {"title": "t", "version": "1", "x-gecko-upstream": {"type": "ftp"}},
           "paths": {}}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(ToolkitLoadError, match="x-gecko-upstream"):
        load_toolkits([tmp_path])


def test_unknown_mode_is_refused(make_client):
    reply = make_client().post("/sessions", json={"config": {"mode": "live"}})
    assert reply.status_code == 422 and "mode" in reply.text


def test_an_unstorable_upstream_answer_is_a_502_and_stores_nothing(make_client, pets_toolkits):
    client = make_client(schemas_dirs=[pets_toolkits], allow_upstream=["*"])
    headers = _session(client, "hybrid")
    reply = client.get(f"/petstore/pets/{DEEP_PET}", headers=headers)
    assert reply.status_code == 502 and "nested deeper than" in reply.json()["detail"]
    sid = headers["X-Session-ID"]
    assert client.get(f"/sessions/{sid}/history").status_code == 200
    assert client.get("/get-session-state", headers=headers).json() == {"state": {}, "version": 0}


HOSTILE_UPSTREAM = Path(__file__).resolve().parents[1] / "data" / "hostile" / "upstream"


@pytest.mark.parametrize("mode", ["hybrid", "passthrough"])
def test_a_toolkit_upstream_runs_only_when_the_operator_allowed_it(make_client, tmp_path, monkeypatch, mode):
    marker = tmp_path / "ran"
    monkeypatch.setenv("GECKO_TEST_MARKER", str(marker))
    client = make_client(schemas_dirs=[HOSTILE_UPSTREAM], upstream_timeout_s=5)
    headers = _session(client, mode)
    reply = client.post("/shell/get_secret", json={}, headers=headers)
    assert reply.status_code == 409 and "--allow-upstream shell" in reply.json()["detail"], reply.text
    assert not marker.exists()
    assert client.post("/shell/get_secret", json={}, headers=_session(client, "simulate")).status_code == 200
    allowed = make_client(schemas_dirs=[HOSTILE_UPSTREAM], upstream_timeout_s=5, allow_upstream=["other", "shell"])
    assert allowed.post("/shell/get_secret", json={}, headers=_session(allowed, mode)).status_code == 502
    assert marker.exists()  # allowed: the command ran (and, being no MCP server, failed: 502)
