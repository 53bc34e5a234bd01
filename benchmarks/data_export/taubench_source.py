"""tau2 run directories (`gecko tau2`) as episodes: one per GATS rehearsal (a customer message the agent replied to).

The prompt is what the rehearsing agent read: the agent's system prompt with the domain policy, then the
conversation up to that message (`results.json`'s messages, as `llm_chat.agent_view` shows them). The tools are the
domain's mock toolkit as the run's task set offers it. The verdict is tau2's reward for the conversation. Every
task is a tau2-bench test task: rows contaminate `tau2-bench`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from benchmarks.data_export.model import Episode, TaskRef
from benchmarks.data_export.sources import SourceContext
from benchmarks.data_export.traces import offered_tools, parse_attempts, toolkit_catalog
from benchmarks.runner.faults import clean_key
from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.llm_chat import prompt, render
from benchmarks.taubench.loader import DataStore
from benchmarks.taubench.mock_toolkits import MOCK_DIR

CONTAMINATES = "tau2-bench"


def _conversation(message: dict[str, Any]) -> dict[str, Any] | None:
    """One tau2 message as the agent's model reads it (None: not part of its view)."""
    role = message.get("role")
    if role == "assistant":
        entry: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        calls = message.get("tool_calls") or []
        if calls:
            entry["tool_calls"] = [{"id": c.get("id"), "type": "function", "function": {
                "name": c.get("name"), "arguments": json.dumps(c.get("arguments") or {})}} for c in calls]
        return entry
    if role == "user":
        return {"role": "user", "content": message.get("content") or ""}
    if role == "tool":
        return {"role": "tool", "tool_call_id": message.get("id"), "content": message.get("content") or ""}
    return None


def _setup(context: SourceContext) -> dict[str, Any]:
    if "tau2" not in context.cache:
        config = context.config.get("config") or {}
        domain = str(config.get("domain") or "airline")
        runtime = DomainRuntime(domain, DataStore(), config.get("task_set") or "v1")
        system = render(prompt("agent_system"), policy=runtime.policy)
        catalog = toolkit_catalog([(context.toolkits_dir or MOCK_DIR) / f"{domain}.json"])
        results_path = context.files.path / "results.json"
        results = json.loads(results_path.read_text(encoding="utf-8")) if results_path.is_file() else {}
        simulations = {f"{s.get('task_id')}#{s.get('trial')}": s for s in results.get("simulations") or ()}
        context.cache["tau2"] = {"system": system, "tools": offered_tools(catalog, runtime.tool_names()),
                                "simulations": simulations}
    setup: dict[str, Any] = context.cache["tau2"]
    return setup


def tau2_episodes(context: SourceContext, key: str, entry: dict[str, Any], trace: dict[str, Any],
                  ) -> Iterator[Episode]:
    """One episode per rehearsal of a conversation (none when `results.json` lacks it)."""
    setup = _setup(context)
    task_key = clean_key(key)
    simulation = setup["simulations"].get(task_key)
    if simulation is None:
        return
    view = [m for m in (_conversation(raw) for raw in simulation.get("messages") or ()) if m is not None]
    reward = (simulation.get("reward_info") or {}).get("reward")
    official = bool(reward >= 1.0) if isinstance(reward, int | float) else None
    ref = TaskRef(context.benchmark, context.run, key, str(entry.get("group") or ""), context.model,
                  task_key.partition("#")[0], CONTAMINATES)
    for raw in trace.get("turns") or ():
        if not isinstance(raw, dict) or not isinstance(raw.get("at_message"), int):
            continue
        raw_simulated = raw.get("simulated")
        simulated: dict[str, Any] = raw_simulated if isinstance(raw_simulated, dict) else {}
        best = simulated.get("best")
        prompt_messages = ({"role": "system", "content": setup["system"]}, *view[: raw["at_message"]])
        yield Episode(ref, int(raw.get("index") or 0), prompt_messages, setup["tools"],
                      parse_attempts(simulated.get("attempts")), best if isinstance(best, int) else None, official)
