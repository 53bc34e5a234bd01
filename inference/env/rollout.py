"""Many episodes at once: `run_episodes` runs a policy over episode specs with bounded concurrency on one
client (RL rollouts run hundreds concurrently), closing every session it opened.

A policy is `async (observation) -> action`. Two come with the package: `scripted_policy` (replays a fixed
list of actions per episode, e.g. ground truth) and `openai_policy` (any OpenAI-compatible model through the
`openai` SDK; the model's tool calls become the action, its text the answer).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inference.env.episode import CatalogCache, GeckoEpisode
from inference.env.spec import EpisodeSpec, RewardConfig
from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoError

Policy = Callable[[dict[str, Any]], Awaitable[Any]]


@dataclass
class EpisodeResult:
    """The outcome of one episode."""

    id: str | None
    reward: float
    steps: int
    terminated: bool
    truncated: bool
    success: bool | None
    """The judge's verdict (None: the judge failed, or the episode failed for infrastructure reasons)."""
    error: str | None = None
    """An infrastructure failure (Gecko down, policy raised): the episode is untested, not failed."""
    rewards: list[float] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    """With `record`: the whole conversation (the last observation's messages), for training data."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """With `record`: the OpenAI function definitions the policy was offered."""
    calls_ok: list[bool] = field(default_factory=list)
    """With `record`: per call, in order, whether Gecko accepted it."""


async def run_episode(client: GeckoClient, spec: EpisodeSpec, policy: Policy,
                      reward: RewardConfig | None = None, catalogs: CatalogCache | None = None,
                      record: bool = False) -> EpisodeResult:
    """Reset, step the policy until the episode ends, close; infrastructure failures become `error`.
    `catalogs` shares tool catalogs between episodes (see `CatalogCache`); `record` keeps the conversation, the
    tools and each call's acceptance in the result (`gecko data export` reads them)."""
    episode = GeckoEpisode(client, reward, catalogs)
    rewards: list[float] = []
    calls_ok: list[bool] = []
    terminated = truncated = False
    info: dict[str, Any] = {}
    observation: dict[str, Any] = {}
    try:
        observation, _ = await episode.reset(spec)
        while not (terminated or truncated):
            action = await policy(observation)
            observation, step_reward, terminated, truncated, info = await episode.step(action)
            rewards.append(step_reward)
            calls_ok += [bool(call.get("ok")) for call in info.get("calls") or ()]
    except (GeckoError, OSError, ValueError, RuntimeError) as exc:
        return EpisodeResult(spec.id, sum(rewards), episode.steps, terminated, truncated, None,
                             f"{type(exc).__name__}: {exc}", rewards)
    finally:
        await episode.close()
    judge = info.get("judge")
    result = EpisodeResult(spec.id, sum(rewards), episode.steps, terminated, truncated,
                           judge["success"] if judge else None, info.get("judge_error"), rewards)
    if record:
        result.messages, result.tools = list(observation.get("messages") or ()), list(observation.get("tools") or ())
        result.calls_ok = calls_ok
    return result


async def run_episodes(client: GeckoClient, specs: Sequence[EpisodeSpec], policy: Callable[[EpisodeSpec], Policy],
                       *, concurrency: int = 64, reward: RewardConfig | None = None,
                       record: bool = False) -> list[EpisodeResult]:
    """Run every spec (at most `concurrency` at a time); `policy(spec)` gives each episode its policy; `record`
    keeps each episode's conversation and tools (see `run_episode`)."""
    gate = asyncio.Semaphore(concurrency)
    catalogs = CatalogCache()

    async def one(spec: EpisodeSpec) -> EpisodeResult:
        async with gate:
            return await run_episode(client, spec, policy(spec), reward, catalogs, record)

    return list(await asyncio.gather(*(one(spec) for spec in specs)))


def scripted_policy(actions: Sequence[Any]) -> Policy:
    """A policy that plays `actions` in order, then answers "Done." (for tests, baselines and benchmarks)."""
    queue = list(actions)

    async def act(observation: dict[str, Any]) -> Any:
        return queue.pop(0) if queue else {"answer": "Done."}

    return act


def openai_policy(model: str, *, base_url: str | None = None, api_key: str | None = None,
                  temperature: float = 0.0, client: Any = None) -> Policy:
    """A policy backed by any OpenAI-compatible chat model (OpenAI, vLLM, Ollama, llama.cpp server, the stub).

    Args:
        model: the model name the endpoint serves.
        base_url, api_key: the endpoint (default: the `openai` SDK's environment variables).
        temperature: sampling temperature.
        client: an `openai.AsyncOpenAI` to use instead of making one.
    """
    from openai import AsyncOpenAI

    llm = client or AsyncOpenAI(base_url=base_url, api_key=api_key or "not-needed")

    async def act(observation: dict[str, Any]) -> Any:
        options: dict[str, Any] = {"tools": observation["tools"]} if observation["tools"] else {}
        reply = await llm.chat.completions.create(model=model, messages=observation["messages"],
                                                  temperature=temperature, **options)
        message = reply.choices[0].message
        calls = [c for c in message.tool_calls or () if getattr(c, "function", None) is not None]
        if calls:
            return {"tool_calls": [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                                   for c in calls]}
        return {"answer": message.content or ""}

    return act


def summarize(results: Sequence[EpisodeResult]) -> Mapping[str, Any]:
    """Counts and means of a batch of episodes (untested ones are counted apart, never as failures)."""
    tested = [r for r in results if r.error is None]
    return {"episodes": len(results), "untested": len(results) - len(tested),
            "success": sum(1 for r in tested if r.success), "truncated": sum(1 for r in tested if r.truncated),
            "mean_reward": round(sum(r.reward for r in tested) / len(tested), 4) if tested else None,
            "steps": sum(r.steps for r in results)}


def dumps_result(result: EpisodeResult) -> str:
    """One JSON line of an episode result."""
    return json.dumps(result.__dict__, ensure_ascii=False)
