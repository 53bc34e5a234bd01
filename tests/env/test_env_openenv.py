"""The OpenEnv adapter against the real `openenv` library: an OpenEnv server (`create_openenv_app`, served by
uvicorn) over a real Gecko, driven by `GeckoEnvClient` (OpenEnv's WebSocket `EnvClient`) and by OpenEnv's HTTP
Task API. Lifecycle, rewards, truncation, suites, errors and that a closed session leaves no Gecko session."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from types import ModuleType

import httpx
import pytest
import uvicorn

from inference.env import EpisodeSpec, RewardConfig
from tests.infra import require_module

pytestmark = pytest.mark.integration
NOTE = {"name": "create_note", "arguments": {"title": "Groceries", "body": "milk"}}
SUITE = [EpisodeSpec(task="Create a note titled Groceries", toolkits=["notes"], id="groceries", max_steps=3),
         EpisodeSpec(task="List my notes", toolkits=["notes"], id="list", checklist=["notes are listed"])]


@pytest.fixture(scope="module")
def oe() -> ModuleType:
    """The OpenEnv adapter, imported here rather than at collection (openenv and gradio take seconds to import)."""
    return require_module("inference.env.openenv_adapter", "the `openenv` extra is not installed (make setup installs it)")


@pytest.fixture(scope="module")
def openenv_url(oe: ModuleType, live_gecko: str) -> Iterator[str]:
    app = oe.create_openenv_app(live_gecko, defaults={"toolkits": ["notes"], "max_steps": 4},
                                reward=RewardConfig(valid_call=0.1, invalid_call=-0.1), suites={"notes": SUITE})
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))  # bound here, handed to uvicorn: no other process can take the port in between
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the OpenEnv server did not start"
        time.sleep(0.05)
    yield url
    server.should_exit = True
    thread.join(timeout=30)
    sock.close()


def gecko_sessions(url: str) -> int:
    return int(httpx.get(f"{url}/health").json()["sessions"])


async def wait_sessions(url: str, expected: int) -> int:
    for _ in range(100):  # the OpenEnv server deletes the Gecko session after the WebSocket closes
        if (count := gecko_sessions(url)) == expected:
            return count
        await asyncio.sleep(0.05)
    return gecko_sessions(url)


async def test_episode_over_openenv_client(oe: ModuleType, openenv_url: str, live_gecko: str) -> None:
    before = gecko_sessions(live_gecko)
    async with oe.GeckoEnvClient(base_url=openenv_url) as env:
        result = await env.reset(task="Create a note titled Groceries", episode_id="ep-1")
        assert result.observation.messages == [{"role": "user", "content": "Create a note titled Groceries"}]
        assert {t["function"]["name"] for t in result.observation.tools} >= {"create_note", "list_notes"}
        state = await env.state()
        assert state.session_id and state.episode_id == "ep-1" and state.checklist
        assert gecko_sessions(live_gecko) == before + 1

        result = await env.step(oe.GeckoAction(tool_calls=[NOTE]))
        assert (result.reward, result.done) == (pytest.approx(0.1), False)
        assert result.observation.metadata["calls"][0]["ok"] is True
        assert [m["role"] for m in result.observation.messages] == ["user", "assistant", "tool"]

        result = await env.step(oe.GeckoAction(tool_calls=[{"name": "create_note", "arguments": {"title": 5}}]))
        assert result.reward == pytest.approx(-0.1) and result.observation.metadata["calls"][0]["status"] == 422

        result = await env.step(oe.GeckoAction(answer="Created."))
        assert result.done is True and result.observation.metadata["terminated"] is True
        assert "judge" in result.observation.metadata
        assert (await env.state()).done is True
    assert await wait_sessions(live_gecko, before) == before


async def test_truncation_and_success_reward(oe: ModuleType, openenv_url: str, live_gecko: str) -> None:
    async with oe.GeckoEnvClient(base_url=openenv_url) as env:
        await env.reset(task="Create a note titled Groceries", max_steps=1)
        result = await env.step(oe.GeckoAction(tool_calls=[NOTE]))
        assert result.done is True and result.observation.metadata["truncated"] is True
        result = await env.reset(task="Create a note titled Groceries")   # a second episode on the same client
        await env.step(oe.GeckoAction(tool_calls=[NOTE]))
        result = await env.step(oe.GeckoAction(answer="Done."))
        assert result.done and result.reward == pytest.approx(1.0)       # judged success, no shaping on answers


async def test_suite_split_and_task_api(oe: ModuleType, openenv_url: str) -> None:
    async with httpx.AsyncClient(base_url=openenv_url) as http:
        assert [split["name"] for split in (await http.get("/gecko/splits")).json()] == ["notes"]
        assert (await http.post("/gecko/num_tasks", json={"split": "notes"})).json() == {"num_tasks": 2}
        task = (await http.post("/gecko/task", json={"split": "notes", "index": 0})).json()
        assert task["task"]["id"] == "groceries" and task["task"]["task"] == "Create a note titled Groceries"
    async with oe.GeckoEnvClient(base_url=openenv_url) as env:
        result = await env.reset(split="notes", index=1)
        assert result.observation.task == "List my notes"
        assert result.observation.metadata["checklist"] == [{"id": "1", "description": "notes are listed"}]
        assert (await env.state()).episode_id == "list"


async def test_errors_reach_the_client(oe: ModuleType, openenv_url: str) -> None:
    async with oe.GeckoEnvClient(base_url=openenv_url) as env:
        with pytest.raises(Exception, match="reset"):
            await env.step(oe.GeckoAction(answer="too early"))
    async with oe.GeckoEnvClient(base_url=openenv_url) as env:
        with pytest.raises(Exception, match="no_such_toolkit|unknown|404"):
            await env.reset(task="x", toolkits=["no_such_toolkit"])


async def test_many_clients_at_once_leave_no_session(oe: ModuleType, openenv_url: str, live_gecko: str) -> None:
    before = gecko_sessions(live_gecko)

    async def one(index: int) -> float:
        async with oe.GeckoEnvClient(base_url=openenv_url) as env:
            await env.reset(task="Create a note titled Groceries", episode_id=str(index))
            call = await env.step(oe.GeckoAction(tool_calls=[NOTE]))
            answer = await env.step(oe.GeckoAction(answer="Done."))
            return float(call.reward or 0.0) + float(answer.reward or 0.0)

    rewards = await asyncio.gather(*(one(i) for i in range(16)))
    assert rewards == [pytest.approx(1.1)] * 16
    assert await wait_sessions(live_gecko, before) == before
