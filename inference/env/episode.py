"""`GeckoEpisode`: one RL episode over one Gecko session, async (many run at once on one client).

Lifecycle: `reset(spec)` creates a session limited to the spec's toolkits with the initial state (merged over
the toolkits' default states), fixes the checklist, and returns the first observation. `step(action)` runs the
action's tool calls in the session (in parallel when there are several) or takes the final answer; the episode
ends when an answer is given (`terminated`) or after `max_steps` steps (`truncated`), and then the judge gives
its per-item verdicts and the final reward. A spec with `follow_ups` is a multi-turn conversation: an answer
sends the next user turn instead of ending the episode. `fork()` branches a new episode from the current state (a copy of
the session, the messages and the step count). `close()` deletes the session; `reset` on a used episode closes
the previous session first.

Observation (a dict): `task`, `messages` (the OpenAI chat messages so far: system?, user, then assistant tool
calls and tool results), `tools` (OpenAI function definitions), `step`. `info` of a step: `calls` (per call:
name, status, ok, errors, semantic), `turn`, `state_version`, and at the end `judge` (success, items, remaining) or
`judge_error`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Mapping
from typing import Any

from inference.env.spec import Action, EpisodeSpec, RewardConfig, ToolCallAction, parse_action
from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoError
from inference.gecko.models import JudgeReply
from inference.tools.catalog import ToolCatalog

StepResult = tuple[dict[str, Any], float, bool, bool, dict[str, Any]]


class EpisodeError(RuntimeError):
    """`step` before `reset`, or after the episode ended."""


class CatalogCache:
    """Tool catalogs by toolkit set, fetched from Gecko once and shared by the episodes that use one (a batch of
    `run_episodes`, one `GeckoEnv`, an episode and its forks): a reset costs no toolkit request after the first.

    A failed fetch is not kept (the next reset asks again). A toolkit reloaded on the server is seen by a new
    cache, not by this one.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, ...], asyncio.Task[tuple[ToolCatalog, list[dict[str, Any]]]]] = {}

    async def get(self, client: GeckoClient, toolkits: list[str]) -> tuple[ToolCatalog, list[dict[str, Any]]]:
        """(the catalog, its OpenAI function definitions) of `toolkits`.

        Raises:
            GeckoError: Gecko refused (unknown toolkit) or failed.
        """
        key = tuple(toolkits)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = asyncio.ensure_future(self._fetch(client, toolkits))
        try:
            return await asyncio.shield(entry)
        except BaseException:
            if entry.done() and self._entries.get(key) is entry:
                del self._entries[key]
            raise

    @staticmethod
    async def _fetch(client: GeckoClient, toolkits: list[str]) -> tuple[ToolCatalog, list[dict[str, Any]]]:
        catalog = ToolCatalog.from_toolkits(list(await asyncio.gather(*(client.toolkit(n) for n in toolkits))))
        return catalog, catalog.openai_tools()


class GeckoEpisode:
    """One episode at a time over a shared `GeckoClient` (see the module docstring)."""

    def __init__(self, client: GeckoClient, reward: RewardConfig | None = None,
                 catalogs: CatalogCache | None = None) -> None:
        self.client = client
        self.reward_config = reward or RewardConfig()
        self.catalogs = catalogs or CatalogCache()
        self.tools: list[dict[str, Any]] = []
        """The OpenAI function definitions of the episode's tools (shared with other episodes: read-only)."""
        self.spec: EpisodeSpec | None = None
        self.session_id: str | None = None
        self.catalog: ToolCatalog | None = None
        self.checklist: list[dict[str, str]] | None = None
        self.messages: list[dict[str, Any]] = []
        self.steps = 0
        self.turn = 0
        """Follow-up user turns sent so far."""
        self.done = False
        self.state_version = 0
        self._call_ids = itertools.count(1)

    async def reset(self, spec: EpisodeSpec | Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start the episode of `spec`; returns (observation, info with `session_id` and `checklist`).

        Raises:
            pydantic.ValidationError: a bad spec.
            GeckoError: Gecko refused or failed (unknown toolkit, server down).
        """
        spec = spec if isinstance(spec, EpisodeSpec) else EpisodeSpec.model_validate(dict(spec))
        await self.close()
        self.spec, self.steps, self.turn, self.done, self.messages = spec, 0, 0, False, []
        catalog, self.tools = await self.catalogs.get(self.client, spec.toolkits)
        session = await self.client.create_session(config={"toolkits": spec.toolkits})
        self.session_id, self.catalog = session.session_id, catalog
        state = await self.client.init_session_state(session.session_id, spec.state, involved_classes=spec.toolkits)
        self.state_version = state.version
        if spec.checklist is not None:
            self.checklist = [{"id": str(i + 1), "description": text} for i, text in enumerate(spec.checklist)]
        else:
            reply = await self.client.checklist(session.session_id, spec.requests)
            self.checklist = [{"id": item.id, "description": item.description} for item in reply.items]
        if spec.system_prompt:
            self.messages.append({"role": "system", "content": spec.system_prompt})
        self.messages.append({"role": "user", "content": spec.task})
        return self.observation(), {"session_id": session.session_id, "checklist": self.checklist,
                                    "state_version": self.state_version}

    def observation(self) -> dict[str, Any]:
        """The current observation (the message list is a copy a policy may keep or extend; the messages and
        the tools are shared: read-only)."""
        assert self.spec is not None
        return {"task": self.spec.task, "messages": list(self.messages), "tools": list(self.tools),
                "step": self.steps}

    async def step(self, action: Any) -> StepResult:
        """Apply one action; returns (observation, reward, terminated, truncated, info).

        Raises:
            EpisodeError: no episode is running.
            GeckoError: Gecko failed (5xx, transport, session gone): an infrastructure failure, not a reward.
        """
        if self.spec is None or self.session_id is None or self.done:
            raise EpisodeError("call reset() first" if not self.done else "the episode has ended; call reset()")
        parsed = parse_action(action)
        self.steps += 1
        info: dict[str, Any] = {"calls": [], "problems": parsed.problems}
        reward = 0.0
        terminated = parsed.answer is not None and not parsed.tool_calls
        info["turn"] = self.turn
        if parsed.tool_calls:
            outcomes = await asyncio.gather(*(self._call(call) for call in parsed.tool_calls))
            self._append_calls(parsed, outcomes)
            info["calls"] = [summary for _, summary in outcomes]
            valid = sum(1 for _, s in outcomes if s["ok"])
            reward += valid * self.reward_config.valid_call + (len(outcomes) - valid) * self.reward_config.invalid_call
        elif terminated:
            self.messages.append({"role": "assistant", "content": parsed.answer})
            if self.turn < len(self.spec.follow_ups):  # the user's next turn: the episode goes on
                self.messages.append({"role": "user", "content": self.spec.follow_ups[self.turn]})
                self.turn += 1
                terminated = False
        else:
            self.messages.append({"role": "user", "content": "Invalid action: " + "; ".join(parsed.problems)})
            reward += self.reward_config.invalid_call
        truncated = not terminated and self.steps >= self.spec.max_steps
        info["state_version"] = self.state_version
        if terminated or truncated:
            self.done = True
            reward += await self._final(parsed.answer, info)
        return self.observation(), reward, terminated, truncated, info

    async def _call(self, call: ToolCallAction) -> tuple[str, dict[str, Any]]:
        """(tool message content, call summary) of one call."""
        assert self.catalog is not None and self.session_id is not None
        tool = self.catalog.resolve(call.name) or self.catalog.by_original_name(call.name)
        summary: dict[str, Any] = {"name": call.name, "ok": False}
        if tool is None:
            near = self.catalog.suggestions(call.name)
            message = f"Unknown tool {call.name!r}." + (f" Did you mean: {', '.join(near)}?" if near else "")
            summary.update(status=404, errors=[{"keyword": "unknown_tool", "message": message}])
            return json.dumps({"error": message}), summary
        if not isinstance(call.arguments, Mapping):
            message = f"The arguments of {call.name} must be a JSON object."
            summary.update(status=422, errors=[{"keyword": "type", "message": message}])
            return json.dumps({"error": message}), summary
        response = await self.client.call_tool(self.session_id, tool.toolkit, tool.operation_id, call.arguments)
        summary.update(status=response.status, ok=response.ok, semantic=response.semantic)
        if response.state_version is not None:
            self.state_version = max(self.state_version, response.state_version)
        if response.ok:
            return json.dumps(response.body, ensure_ascii=False, default=str), summary
        summary["errors"] = response.errors or [{"keyword": "rejected", "message": response.detail}]
        return json.dumps({"error": response.detail or "rejected", "errors": response.errors}, ensure_ascii=False), summary

    def _append_calls(self, action: Action, outcomes: list[tuple[str, dict[str, Any]]]) -> None:
        ids = [call.id or f"call_{next(self._call_ids)}" for call in action.tool_calls]
        self.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {
                "name": call.name, "arguments": json.dumps(call.arguments) if not isinstance(call.arguments, str)
                else call.arguments}}
            for call_id, call in zip(ids, action.tool_calls, strict=True)]})
        for call_id, (content, _) in zip(ids, outcomes, strict=True):
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    async def _final(self, answer: str | None, info: dict[str, Any]) -> float:
        assert self.spec is not None and self.session_id is not None
        try:
            verdict = await self.client.judge(self.session_id, task=self.spec.requests, agent_response=answer,
                                              checklist=self.checklist)
        except GeckoError as exc:
            info["judge_error"] = str(exc)
            return 0.0
        info["judge"] = verdict.model_dump(exclude={"usage"})
        return final_reward(verdict, self.reward_config)

    async def fork(self) -> GeckoEpisode:
        """A new episode that continues from this one's current state (its own session copy).

        Raises:
            EpisodeError: no episode is running.
        """
        if self.session_id is None or self.spec is None:
            raise EpisodeError("call reset() first")
        session = await self.client.fork(self.session_id)
        twin = GeckoEpisode(self.client, self.reward_config, self.catalogs)
        twin.spec, twin.session_id, twin.catalog, twin.checklist = self.spec, session.session_id, self.catalog, self.checklist
        twin.tools, twin.messages = self.tools, list(self.messages)
        twin.steps, twin.turn, twin.done, twin.state_version = self.steps, self.turn, self.done, self.state_version
        return twin

    async def close(self) -> None:
        """Delete the episode's session (no-op when there is none)."""
        if self.session_id is not None:
            session_id, self.session_id = self.session_id, None
            await self.client.delete_session(session_id)


def final_reward(verdict: JudgeReply, config: RewardConfig) -> float:
    """The end-of-episode reward of a judge verdict under `config`."""
    if config.mode == "fraction":
        return sum(1 for item in verdict.items if item.status == "success") / len(verdict.items) if verdict.items else 0.0
    return 1.0 if verdict.success else 0.0
