"""The gymnasium.Env over a real Gecko."""

from __future__ import annotations

import httpx
import pytest

from tests.infra import require_module

gymnasium = require_module("gymnasium", "needs the [env] extra (make setup installs it)")

from inference.env import EpisodeError  # noqa: E402 - after the require_module
from inference.env.gym import GeckoEnv  # noqa: E402

pytestmark = pytest.mark.integration
NOTE = {"name": "create_note", "arguments": {"title": "Groceries", "body": "milk"}}


def test_gym_api(live_gecko: str) -> None:
    env = GeckoEnv(live_gecko, defaults={"toolkits": ["notes"], "max_steps": 4})
    assert isinstance(env, gymnasium.Env)
    with pytest.raises(EpisodeError):
        env.step({"answer": "too early"})
    obs, info = env.reset(seed=1, options={"task": "Create a note titled Groceries"})
    assert env.observation_space.contains(obs) and info["checklist"]
    obs, reward, terminated, truncated, info = env.step({"tool_calls": [NOTE]})
    assert info["calls"][0]["ok"] and not terminated and not truncated

    branch = env.fork()
    _, reward, terminated, _, info = branch.step({"answer": "Created."})
    assert terminated and reward == 1.0 and info["judge"]["success"]
    branch_session = branch.episode.session_id
    branch.close()

    _, reward, terminated, truncated, _ = env.step({"answer": "Created."})
    assert terminated and reward == 1.0
    session = env.episode.session_id
    env.close()
    env.close()  # twice is fine
    for sid in (session, branch_session):
        assert httpx.get(f"{live_gecko}/sessions/{sid}").status_code == 404
