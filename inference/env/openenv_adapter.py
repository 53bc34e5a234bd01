"""Gecko episodes as an OpenEnv environment (needs the `openenv` extra: PyPI `openenv`, the Meta-PyTorch /
Hugging Face environment framework that TRL's GRPO trainer drives).

Server side: `create_openenv_app(gecko_url, …)` is an OpenEnv FastAPI app (`openenv.core.create_app`) whose
`Environment` is `GeckoOpenEnv`: each OpenEnv session (one WebSocket connection of an `EnvClient`) runs one
`GeckoEpisode` over a shared `GeckoClient`, and the Gecko session is deleted when the OpenEnv session ends.
`reset(**fields)` takes `EpisodeSpec` fields (over the app's `defaults`), or `split=` and `index=` to pick a
task of a ready-made suite (OpenEnv's Task API: `list_splits`, `num_tasks`, `get_task`). `step(GeckoAction)`
returns a `GeckoObservation` with OpenEnv's `reward` and `done` (terminated or truncated) and the step's
`info` in `metadata` (plus `truncated`). `state` is a `GeckoState` (session id, checklist, state version).

Client side: `GeckoEnvClient`, OpenEnv's `EnvClient` for these types:

```python
async with GeckoEnvClient(base_url="http://127.0.0.1:8001") as env:
    result = await env.reset(task="Create a note titled Groceries", toolkits=["notes"])
    result = await env.step(GeckoAction(tool_calls=[{"name": "create_note", "arguments": {"title": "Groceries"}}]))
    result = await env.step(GeckoAction(answer="Created."))        # result.done, result.reward
```
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server import Environment, create_app
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from inference.env.episode import CatalogCache, EpisodeError, GeckoEpisode
from inference.env.spec import EpisodeSpec, RewardConfig
from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoError

log = logging.getLogger(__name__)


class GeckoAction(Action):
    """One step: parallel tool calls (`{"name", "arguments"}` or OpenAI-shaped), or a final answer."""

    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    answer: str | None = None


class GeckoObservation(Observation):
    """The episode so far: the user's task, the OpenAI chat messages, the tools (OpenAI function definitions)."""

    task: str = ""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    step: int = 0


class GeckoState(State):
    """The episode's Gecko session, checklist and state version."""

    session_id: str | None = None
    checklist: list[dict[str, str]] | None = None
    state_version: int = 0
    turn: int = 0
    done: bool = False


class _Shared:
    """What every environment of one app shares: the Gecko client (made on the server's loop), the settings."""

    def __init__(self, gecko_url: str, api_key: str | None, defaults: Mapping[str, Any],
                 reward: RewardConfig | None, suites: Mapping[str, Sequence[EpisodeSpec]],
                 max_connections: int) -> None:
        self.gecko_url, self.api_key, self.defaults, self.reward = gecko_url, api_key, dict(defaults), reward
        self.suites = {name: list(specs) for name, specs in suites.items()}
        self.max_connections = max_connections
        self.client: GeckoClient | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closing: set[asyncio.Task[None]] = set()
        self.catalogs = CatalogCache()

    def gecko(self) -> GeckoClient:
        if self.client is None:
            self.loop = asyncio.get_running_loop()
            self.client = GeckoClient(self.gecko_url, api_key=self.api_key, max_connections=self.max_connections)
        return self.client

    async def aclose(self) -> None:
        if self.closing:
            await asyncio.gather(*self.closing, return_exceptions=True)
        if self.client is not None:
            await self.client.aclose()
            self.client = None


class GeckoOpenEnv(Environment[GeckoAction, GeckoObservation, GeckoState]):
    """One Gecko episode per OpenEnv session (made by `create_openenv_app`; see the module docstring)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, shared: _Shared) -> None:
        super().__init__()
        self._shared = shared
        self._episode: GeckoEpisode | None = None
        self._episode_id: str | None = None

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **fields: Any) -> GeckoObservation:
        """Start an episode: `EpisodeSpec` fields over the app's defaults, or `split` and `index` of a suite."""
        spec = self._spec(fields)
        if self._episode is None:
            self._episode = GeckoEpisode(self._shared.gecko(), self._shared.reward, self._shared.catalogs)
        observation, info = await self._episode.reset(spec)
        self._episode_id = episode_id or spec.id
        return GeckoObservation(**observation, metadata=info)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **fields: Any) -> GeckoObservation:
        raise NotImplementedError("GeckoOpenEnv is async: the OpenEnv server calls reset_async")

    async def step_async(self, action: GeckoAction, timeout_s: float | None = None,
                         **kwargs: Any) -> GeckoObservation:
        """Apply one action (raises `EpisodeError` before `reset` or after the end)."""
        if self._episode is None:
            raise EpisodeError("call reset() first")
        raw: dict[str, Any] = {"tool_calls": action.tool_calls} if action.tool_calls else {}
        if action.answer is not None and not action.tool_calls:
            raw["answer"] = action.answer
        observation, reward, terminated, truncated, info = await self._episode.step(raw)
        return GeckoObservation(**observation, reward=reward, done=terminated or truncated,
                                metadata={**info, "terminated": terminated, "truncated": truncated})

    def step(self, action: GeckoAction, timeout_s: float | None = None, **kwargs: Any) -> GeckoObservation:
        raise NotImplementedError("GeckoOpenEnv is async: the OpenEnv server calls step_async")

    @property
    def state(self) -> GeckoState:
        episode = self._episode
        if episode is None:
            return GeckoState(episode_id=self._episode_id)
        return GeckoState(episode_id=self._episode_id, step_count=episode.steps, session_id=episode.session_id,
                          checklist=episode.checklist, state_version=episode.state_version, turn=episode.turn,
                          done=episode.done)

    def close(self) -> None:
        """Delete the Gecko session (OpenEnv calls this when the session ends, on the loop or in a thread)."""
        episode, loop = self._episode, self._shared.loop
        if episode is None or episode.session_id is None or loop is None or loop.is_closed():
            return
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            task = loop.create_task(_close_quietly(episode))
            self._shared.closing.add(task)
            task.add_done_callback(self._shared.closing.discard)
        else:
            asyncio.run_coroutine_threadsafe(_close_quietly(episode), loop).result(timeout=60)

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name="gecko", version="1.0.0", description=(
            "Tool-call episodes simulated by Gecko: tool schemas are the actions, simulated results the "
            "observations, the checklist judge the reward."))

    # OpenEnv's Task API (ready-made suites): splits are suite names, tasks their episode specs.
    def list_splits(self) -> list[str]:
        return list(self._shared.suites)

    def num_tasks(self, split: str) -> int:
        return len(self._suite(split))

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [spec.model_dump() for spec in self._suite(split)]

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        return self._suite(split)[index].model_dump()

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        return [spec.model_dump() for spec in self._suite(split)[start:stop]]

    def _suite(self, split: str) -> list[EpisodeSpec]:
        if split not in self._shared.suites:
            raise KeyError(f"unknown split {split!r}; splits: {', '.join(self._shared.suites) or 'none'}")
        return self._shared.suites[split]

    def _spec(self, fields: Mapping[str, Any]) -> EpisodeSpec:
        fields = dict(fields)
        split, index = fields.pop("split", None), fields.pop("index", None)
        if split is not None:
            if not isinstance(index, int):
                raise ValueError("reset(split=…) needs an integer index")
            return self._suite(split)[index].model_copy(update=fields)
        return EpisodeSpec.model_validate({**self._shared.defaults, **fields})


async def _close_quietly(episode: GeckoEpisode) -> None:
    try:
        await episode.close()
    except GeckoError as exc:  # Gecko down or the session already gone: nothing left to free here
        log.warning("could not delete Gecko session: %s", exc)


def create_openenv_app(gecko_url: str, *, defaults: Mapping[str, Any] | None = None,
                       reward: RewardConfig | None = None, suites: Mapping[str, Sequence[EpisodeSpec]] | None = None,
                       api_key: str | None = None, max_concurrent_envs: int = 256) -> FastAPI:
    """An OpenEnv server (FastAPI app; run it with uvicorn) over the Gecko at `gecko_url`.

    Args:
        gecko_url: the Gecko server the episodes run on.
        defaults: episode fields used when `reset` leaves them out (e.g. `toolkits`, `max_steps`).
        reward: the reward configuration (default: judged success 1.0, no shaping).
        suites: ready-made task sets by name (OpenEnv splits; `reset(split=, index=)` picks one).
        api_key: Gecko's API key, if it runs with one.
        max_concurrent_envs: OpenEnv sessions (episodes) open at once.
    """
    shared = _Shared(gecko_url, api_key, defaults or {}, reward, suites or {}, max_concurrent_envs)
    factory: Callable[[], GeckoOpenEnv] = lambda: GeckoOpenEnv(shared)  # noqa: E731
    app = create_app(factory, GeckoAction, GeckoObservation, env_name="gecko", state_cls=GeckoState,
                     max_concurrent_envs=max_concurrent_envs)
    app.router.on_shutdown.append(shared.aclose)
    return app


class GeckoEnvClient(EnvClient[GeckoAction, GeckoObservation, GeckoState]):
    """OpenEnv's `EnvClient` for a Gecko OpenEnv server (one WebSocket session, one episode at a time)."""

    def _step_payload(self, action: GeckoAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[GeckoObservation]:
        fields = payload.get("observation", {})
        observation = GeckoObservation(
            task=fields.get("task", ""), messages=fields.get("messages", []), tools=fields.get("tools", []),
            step=fields.get("step", 0), done=payload.get("done", False), reward=payload.get("reward"),
            metadata=payload.get("metadata") or fields.get("metadata") or {})
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False),
                          metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> GeckoState:
        return GeckoState.model_validate(payload)
