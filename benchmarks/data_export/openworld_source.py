"""Open-world run directories (`gecko openworld --tasks DIR`) as episodes: one per task.

The prompt is the agent's system prompt (select-then-execute's; the planner–actor's actor is driven by its own
prompts, so none is put first) and the task's instruction from the run's task set. The tools are what the agent
was offered by the end of its run: `search_tools` and every pool tool its searches found (the trace's
`agent_info.discovery.known`), described from the pool's toolkit files. The verdict is the benchmark's score
(judge, constraints). Tasks of a generated task set are nobody's test tasks: `contaminates` is empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.data_export.model import Episode, TaskRef
from benchmarks.data_export.sources import SourceContext
from benchmarks.data_export.traces import offered_tools, parse_attempts, toolkit_catalog
from benchmarks.openworld.tasks.model import read_tasks
from benchmarks.runner.faults import clean_key
from inference.agents.discovery import search_tool_definition
from inference.agents.select_execute import load_open_world_prompt


def _instructions(context: SourceContext) -> dict[str, str]:
    if "instructions" not in context.cache:
        tasks = (context.config.get("config") or {}).get("tasks")
        context.cache["instructions"] = ({task.id: task.instruction for task in read_tasks(Path(tasks))}
                                         if tasks and Path(tasks).exists() else {})
    instructions: dict[str, str] = context.cache["instructions"]
    return instructions


def _system(context: SourceContext) -> list[dict[str, Any]]:
    agent = (context.config.get("config") or {}).get("agent")
    return ([{"role": "system", "content": load_open_world_prompt("select_execute_system").text}]
            if agent == "select-execute" else [])


def _tools(context: SourceContext, trace: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    discovery = (trace.get("agent_info") or {}).get("discovery") or {}
    known = [str(k) for k in discovery.get("known") or ()]
    toolkits = list(dict.fromkeys(k.partition("/")[0] for k in known))
    pool = context.toolkits_dir or Path(str((context.config.get("config") or {}).get("pool") or "data/pool")) / "toolkits"
    catalog = toolkit_catalog([pool / f"{name}.json" for name in toolkits])
    wanted = set(known)
    found = [spec.openai_tool() for spec in catalog.specs if f"{spec.toolkit}/{spec.operation_id}" in wanted]
    return (search_tool_definition(), *found) if found else (search_tool_definition(), *offered_tools(catalog, ()))


def openworld_episodes(context: SourceContext, key: str, entry: dict[str, Any], trace: dict[str, Any],
                       ) -> Iterator[Episode]:
    """The episode of one open-world task (none when the task set is gone)."""
    task_id = clean_key(key)
    instruction = _instructions(context).get(task_id)
    if instruction is None:
        return
    raw_score = trace.get("score")
    score: dict[str, Any] = raw_score if isinstance(raw_score, dict) else {}
    official = score.get("success") if isinstance(score.get("success"), bool) else None
    best = trace.get("best")
    ref = TaskRef(context.benchmark, context.run, key, str(entry.get("group") or ""), context.model, task_id, None)
    yield Episode(ref, 0, (*_system(context), {"role": "user", "content": instruction}), _tools(context, trace),
                  parse_attempts(trace.get("attempts")), best if isinstance(best, int) else None, official)
