"""BFCL run directories as episodes. Every BFCL task is a test task of BFCL: its rows contaminate `bfcl`.

- single-turn (`gecko bfcl`): one episode per task: the run's system prompt and the task's question as the prompt,
  the task's toolkit (`<toolkits>/single_turn/<task id>.json`) as the tools, the official checker's verdict.
- multi-turn (`gecko bfcl-multi`): one episode per turn: the prompt is the system prompt, every earlier turn as
  really executed (user messages, the real calls and their results, the answer) and the turn's user messages;
  the tools are the task's classes as offered at that turn (held-out functions appear when released).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

from benchmarks.bfcl.loader import MultiTurnTask, SingleTurnTask, load_category
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.data_export.conversation import step_messages
from benchmarks.data_export.model import Episode, TaskRef
from benchmarks.data_export.sources import SourceContext
from benchmarks.data_export.traces import offered_tools, parse_attempts, parse_call, toolkit_catalog
from benchmarks.runner.faults import clean_group, clean_key
from utils.llm import load_prompt

CONTAMINATES = "bfcl"


def _system(context: SourceContext) -> list[dict[str, Any]]:
    if "system" not in context.cache:
        agent = (context.config.get("environment") or {}).get("agent") or {}
        path = agent.get("system_prompt")
        text = load_prompt(Path(path)).text if path and Path(path).is_file() else None
        context.cache["system"] = [{"role": "system", "content": text}] if text else []
    system: list[dict[str, Any]] = context.cache["system"]
    return system


def _task(context: SourceContext, group: str, task_id: str) -> SingleTurnTask | MultiTurnTask | None:
    tasks: dict[str, Any] = context.cache.setdefault("tasks", {})
    if group not in tasks:
        tasks[group] = {task.id: task for task in load_category(group)}
    task: SingleTurnTask | MultiTurnTask | None = tasks[group].get(task_id)
    return task


def _ref(context: SourceContext, key: str, entry: dict[str, Any]) -> TaskRef:
    return TaskRef(benchmark=context.benchmark, run=context.run, key=key, group=str(entry.get("group") or ""),
                   model=context.model, source_task_id=clean_key(key), contaminates=CONTAMINATES)


def _official(trace: dict[str, Any]) -> bool | None:
    valid = trace.get("valid")
    return valid if isinstance(valid, bool) else None


def single_turn_episodes(context: SourceContext, key: str, entry: dict[str, Any], trace: dict[str, Any],
                         ) -> Iterator[Episode]:
    """The one episode of a single-turn task (none when its task or toolkit is gone)."""
    group, task_id = clean_group(str(entry.get("group") or "")), clean_key(key)
    task = _task(context, group, task_id)
    if not isinstance(task, SingleTurnTask):
        return
    toolkits = context.toolkits_dir or OPENAPI_DIR / "single_turn"
    tools = offered_tools(toolkit_catalog([toolkits / f"{task_id}.json"]))
    prompt = (*_system(context), *({"role": m.role, "content": m.content} for m in task.messages))
    best = trace.get("best")
    yield Episode(_ref(context, key, entry), 0, tuple(prompt), tools, parse_attempts(trace.get("attempts")),
                  best if isinstance(best, int) else None, _official(trace))


def _real_messages(turn: dict[str, Any]) -> list[dict[str, Any]]:
    raw_real = turn.get("real")
    real: dict[str, Any] = raw_real if isinstance(raw_real, dict) else {}
    calls = [parse_call(c, i) for i, c in enumerate(real.get("calls") or ()) if isinstance(c, dict)]
    messages: list[dict[str, Any]] = []
    for _, step in groupby(calls, key=lambda c: c.step):
        messages += step_messages(step)
    final = real.get("final_text")
    if isinstance(final, str):
        messages.append({"role": "assistant", "content": final})
    return messages


def multi_turn_episodes(context: SourceContext, key: str, entry: dict[str, Any], trace: dict[str, Any],
                        ) -> Iterator[Episode]:
    """One episode per turn of a multi-turn task, each with the real history before it."""
    group, task_id = clean_group(str(entry.get("group") or "")), clean_key(key)
    task = _task(context, group, task_id)
    if not isinstance(task, MultiTurnTask):
        return
    toolkits = context.toolkits_dir or OPENAPI_DIR / "multi_turn"
    catalog = toolkit_catalog([toolkits / f"{name}.json" for name in task.involved_classes])
    history: list[dict[str, Any]] = list(_system(context))
    ref, official = _ref(context, key, entry), _official(trace)
    for raw in trace.get("turns") or ():
        if not isinstance(raw, dict):
            continue
        index = int(raw.get("index") or 0)
        if index >= len(task.turns):
            break
        user = [{"role": m.role, "content": m.content} for m in task.turns[index]]
        raw_simulated = raw.get("simulated")
        simulated: dict[str, Any] = raw_simulated if isinstance(raw_simulated, dict) else {}
        best = simulated.get("best")
        tools = offered_tools(catalog, (doc["name"] for doc in task.functions_at_turn(index)))
        yield Episode(ref, index, (*history, *user), tools, parse_attempts(simulated.get("attempts")),
                      best if isinstance(best, int) else None, official)
        history += [*user, *_real_messages(raw)]
