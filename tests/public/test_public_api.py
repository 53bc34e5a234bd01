"""The public Python API (`gecko_gats`): what it exports, and that the in-process simulator answers as the HTTP
server does."""

from __future__ import annotations

import asyncio
import importlib.resources
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

import gecko_gats
from gecko_gats import GeckoSession, Simulator, SyncGeckoClient, ToolResponse
from tests.conftest import TOOLKITS_DIR
from tests.infra import require_module

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("notes/create_note", {"title": "Groceries", "body": "milk"}),  # valid write
    ("notes/create_note", {"title": "", "body": 3, "extra": True}),  # three violations
    ("notes/get_note", {}),  # a required argument missing
    ("notes/nothing_here", {}),  # unknown tool
]


def test_every_public_name_is_there_and_typed() -> None:
    assert gecko_gats.__version__ == version("gecko-gats")
    for name in gecko_gats.__all__:
        if name != "GeckoEnv":
            assert getattr(gecko_gats, name) is not None, name
    assert importlib.resources.files("gecko_gats").joinpath("py.typed").is_file()
    require_module("gymnasium", "GeckoEnv needs the env extra (make setup installs it)")
    assert gecko_gats.GeckoEnv.__name__ == "GeckoEnv"  # imported on first use (gymnasium)


def _outcome(reply: ToolResponse) -> tuple[Any, ...]:
    """What must match between the simulator and the server: all of an error; the shape of a synthesized body."""
    body = sorted(reply.body) if reply.ok else reply.body
    return reply.status, reply.semantic, reply.tool_error, reply.fault, body


@pytest.mark.integration
def test_the_simulator_answers_as_the_http_server(live_gecko: str) -> None:
    with Simulator([TOOLKITS_DIR]) as sim, sim.session() as local, \
            SyncGeckoClient(live_gecko) as client, client.session() as remote:
        for tool, arguments in CALLS:
            assert _outcome(local.call(tool, arguments)) == _outcome(remote.call(tool, arguments)), tool
        assert local.state().keys() == remote.state().keys()
        assert [e["status"] for e in local.history()] == [e["status"] for e in remote.history()] == [200, 422, 422]


def test_the_simulator_takes_files_documents_and_settings(tmp_path: Path) -> None:
    document = (TOOLKITS_DIR / "notes.json").read_text()
    (tmp_path / "mine.json").write_text(document)
    with Simulator([tmp_path / "mine.json"], state_model="none") as sim:
        assert sim.settings.state_model == "none" and sim.settings.store == "memory"
        with sim.session() as session:
            assert session.call("mine/get_note", {"note_id": "n-1"}).status in (200, 404)
    import json

    with Simulator({"jot": json.loads(document)}) as sim, sim.session() as session:
        assert session.call("jot/create_note", {"title": "a", "body": "b"}).ok
    with pytest.raises(FileNotFoundError):
        Simulator([tmp_path / "missing.yaml"])
    with pytest.raises(TypeError, match="name"):
        Simulator([json.loads(document)])


async def test_the_simulator_from_async_code() -> None:
    with Simulator([TOOLKITS_DIR]) as sim:
        session = sim.session()
        replies = await asyncio.gather(*(session.acall("notes/create_note", {"title": f"n{i}", "body": "x"})
                                         for i in range(5)))
        assert [r.status for r in replies] == [200] * 5
        assert isinstance(session, GeckoSession) and len(session.history()) == 5
        with pytest.raises(ValueError, match="toolkit/operationId"):
            session.call("create_note", {})
