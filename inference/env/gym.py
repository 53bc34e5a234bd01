"""`GeckoEnv`: the standard `gymnasium.Env` API over a `GeckoEpisode` (needs the `env` extra: gymnasium).

```python
env = GeckoEnv("http://127.0.0.1:8000")
obs, info = env.reset(options={"task": "Create a note titled Groceries", "toolkits": ["notes"]})
obs, reward, terminated, truncated, info = env.step({"tool_calls": [{"name": "create_note",
                                                                     "arguments": {"title": "Groceries"}}]})
obs, reward, terminated, truncated, info = env.step({"answer": "Done."})
env.close()
```

Observations and actions are JSON-like dicts (an LLM's messages and tool calls), described by `JsonSpace`;
there is nothing to sample uniformly, so `JsonSpace.sample()` is not offered. The env runs its episode on a
private event loop; for many episodes at once use `GeckoEpisode` directly (`inference.env.rollout`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import gymnasium

from inference.env.episode import GeckoEpisode
from inference.env.spec import RewardConfig
from inference.gecko.client import GeckoClient


class JsonSpace(gymnasium.Space[Any]):
    """A space of JSON objects that have the given keys (observations: task/messages/tools/step)."""

    def __init__(self, keys: tuple[str, ...] = ()) -> None:
        super().__init__(shape=None, dtype=None)
        self.keys = keys

    def contains(self, x: Any) -> bool:
        return isinstance(x, Mapping) and all(key in x for key in self.keys) or (not self.keys and isinstance(x, str))

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        raise NotImplementedError("tool-call actions are made by a policy, not sampled uniformly")

    @property
    def is_np_flattenable(self) -> bool:
        return False


class GeckoEnv(gymnasium.Env[dict[str, Any], Any]):
    """One Gecko episode at a time through the gymnasium API.

    Args:
        base_url: the Gecko server.
        reward: the reward configuration (default: judged success 1.0, no shaping).
        api_key: Gecko's `--api-key`, if set.
        defaults: episode fields used when `reset(options=…)` leaves them out (e.g. `toolkits`, `max_steps`).
    """

    metadata = {"render_modes": []}

    def __init__(self, base_url: str, *, reward: RewardConfig | None = None, api_key: str | None = None,
                 defaults: Mapping[str, Any] | None = None) -> None:
        self.observation_space = JsonSpace(("task", "messages", "tools", "step"))
        self.action_space = JsonSpace()
        self._loop = asyncio.new_event_loop()
        self._client = GeckoClient(base_url, api_key=api_key)
        self._api_key = api_key
        self._episode = GeckoEpisode(self._client, reward)
        self._defaults = dict(defaults or {})

    @property
    def episode(self) -> GeckoEpisode:
        """The underlying async episode (session id, messages, checklist)."""
        return self._episode

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: `options` holds the `EpisodeSpec` fields (task, toolkits, state, checklist, max_steps)."""
        super().reset(seed=seed)
        return self._loop.run_until_complete(self._episode.reset({**self._defaults, **(options or {})}))

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Tool calls or a final answer (see `inference.env.spec.parse_action`)."""
        return self._loop.run_until_complete(self._episode.step(action))

    def fork(self) -> GeckoEnv:
        """A new env continuing from this episode's current state (snapshot/restore by session fork)."""
        twin = GeckoEnv(self._client.base_url, reward=self._episode.reward_config, api_key=self._api_key,
                        defaults=self._defaults)
        forked = self._loop.run_until_complete(self._episode.fork())
        forked.client = twin._client  # each env's client lives on that env's own event loop
        twin._episode = forked
        return twin

    def close(self) -> None:
        """Delete the session and close the connections."""
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self._episode.close())
        finally:
            self._loop.run_until_complete(self._client.aclose())
            self._loop.close()
