"""Episodes against a real Gecko (2 workers, SQLite): lifecycle, truncation, rewards, parallel calls, fork,
cleanup, many at once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from inference.env import (
    EpisodeError,
    EpisodeSpec,
    GeckoEpisode,
    RewardConfig,
    run_episodes,
    scripted_policy,
    summarize,
)
from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoNotFoundError

pytestmark = pytest.mark.integration
NOTE = {"name": "create_note", "arguments": {"title": "Groceries", "body": "milk"}}
BAD_NOTE = {"name": "create_note", "arguments": {"title": "Groceries"}}


@pytest.fixture
async def client(live_gecko: str) -> AsyncIterator[GeckoClient]:
    gecko = GeckoClient(live_gecko)
    yield gecko
    await gecko.aclose()


def spec(**fields: Any) -> EpisodeSpec:
    return EpisodeSpec(**{"task": "Create a note titled Groceries", "toolkits": ["notes"], **fields})


def sessions(url: str) -> int:
    return int(httpx.get(f"{url}/health").json()["sessions"])


async def test_lifecycle_reset_call_answer(client: GeckoClient) -> None:
    episode = GeckoEpisode(client)
    obs, info = await episode.reset(spec(state={"owner": "ann"}))
    assert obs["messages"] == [{"role": "user", "content": "Create a note titled Groceries"}]
    assert {t["function"]["name"] for t in obs["tools"]} == {"create_note", "get_note", "list_notes"}
    assert info["checklist"] and info["session_id"] == episode.session_id
    state = await client.session_state(episode.session_id)
    assert state.state["owner"] == "ann" and state.state["notes"]["notebooks"] == ["inbox"]  # merged over the default

    obs, reward, terminated, truncated, info = await episode.step({"tool_calls": [NOTE]})
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["calls"][0]["ok"] and info["calls"][0]["status"] == 200 and info["state_version"] >= 1
    assert [m["role"] for m in obs["messages"]] == ["user", "assistant", "tool"]

    obs, reward, terminated, truncated, info = await episode.step({"answer": "Created."})
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["judge"]["success"] is True and info["judge"]["items"]
    with pytest.raises(EpisodeError):
        await episode.step({"answer": "again"})
    session_id = episode.session_id
    await episode.close()
    with pytest.raises(GeckoNotFoundError):
        await client.get_session(session_id)


async def test_validation_error_is_the_observation_and_fails_the_task(client: GeckoClient) -> None:
    episode = GeckoEpisode(client, RewardConfig(valid_call=0.1, invalid_call=-0.2))
    await episode.reset(spec())
    obs, reward, _, _, info = await episode.step({"tool_calls": [BAD_NOTE, NOTE]})  # parallel calls
    assert reward == pytest.approx(-0.1)
    assert [c["status"] for c in info["calls"]] == [422, 200]
    assert info["calls"][0]["errors"][0]["keyword"] == "required"
    tool_messages = [m for m in obs["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 2 and "body" in tool_messages[0]["content"]
    _, reward, terminated, _, info = await episode.step({"answer": "Done."})
    assert terminated and reward == 0.0 and info["judge"]["success"] is False  # rules judge: a call was rejected
    await episode.close()


async def test_truncation_after_max_steps(client: GeckoClient) -> None:
    episode = GeckoEpisode(client)
    await episode.reset(spec(max_steps=2))
    _, _, terminated, truncated, _ = await episode.step({"tool_calls": [NOTE]})
    assert not terminated and not truncated
    _, reward, terminated, truncated, info = await episode.step({"tool_calls": [{"name": "list_notes", "arguments": {}}]})
    assert not terminated and truncated
    assert reward == 1.0 and info["judge"]["success"]  # the rules judge passes valid calls even without an answer
    await episode.close()


@pytest.mark.parametrize(("config", "expected"), [
    (RewardConfig(), 1.0),
    (RewardConfig(mode="fraction"), 1.0),
    (RewardConfig(valid_call=0.25), 1.25),
])
async def test_reward_variants(client: GeckoClient, config: RewardConfig, expected: float) -> None:
    episode = GeckoEpisode(client, config)
    await episode.reset(spec(checklist=["a note titled Groceries exists", "the user is told"]))
    assert [i["description"] for i in episode.checklist or []] == ["a note titled Groceries exists", "the user is told"]
    _, first, *_ = await episode.step({"tool_calls": [NOTE]})
    _, last, *_ = await episode.step({"answer": "Created."})
    assert first + last == pytest.approx(expected)
    await episode.close()


async def test_unknown_tool_and_unknown_toolkit(client: GeckoClient) -> None:
    episode = GeckoEpisode(client)
    await episode.reset(spec())
    _, _, _, _, info = await episode.step({"tool_calls": [{"name": "create_note_x", "arguments": {}}]})
    assert info["calls"][0]["status"] == 404 and "create_note" in info["calls"][0]["errors"][0]["message"]
    await episode.close()
    with pytest.raises(GeckoNotFoundError):
        await GeckoEpisode(client).reset(spec(toolkits=["no_such_toolkit"]))


async def test_fork_branches_from_the_current_state(client: GeckoClient) -> None:
    episode = GeckoEpisode(client)
    await episode.reset(spec())
    await episode.step({"tool_calls": [NOTE]})
    twin = await episode.fork()
    assert twin.session_id != episode.session_id and twin.steps == 1 and twin.messages == episode.messages
    await twin.step({"tool_calls": [{"name": "create_note", "arguments": {"title": "Second", "body": "b"}}]})
    original = await client.session_state(episode.session_id)
    branched = await client.session_state(twin.session_id)
    assert branched.state["counts"]["notes/create_note"] == 2 and original.state["counts"]["notes/create_note"] == 1
    await twin.close()
    await episode.close()


async def test_many_episodes_at_once_leave_no_session(client: GeckoClient, live_gecko: str) -> None:
    before = sessions(live_gecko)
    specs = [spec(id=f"e{i}", max_steps=3) for i in range(40)]
    results = await run_episodes(client, specs, lambda s: scripted_policy([{"tool_calls": [NOTE]}]), concurrency=16)
    assert summarize(results) == {"episodes": 40, "untested": 0, "success": 40, "truncated": 0, "mean_reward": 1.0,
                                  "steps": 80}
    assert sessions(live_gecko) <= before
