"""RL-environment rollouts as episodes: a JSON Lines file of `inference.env.EpisodeResult`s recorded with their
conversation (`run_episodes(..., record=True)`; `scripts/env_rollout.py --out FILE`).

Each line is one episode with one attempt (no GATS: the judge's verdict is its outcome): the prompt is the
messages before the policy's first reply, the attempt is the rest as recorded (later user turns included). A
line names the benchmark whose test task it was made on in `contaminates` (null: a task no benchmark tests on); a
line without the field is flagged `unknown`, so it is never exported as clean by mistake.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.data_export.model import Attempt, Call, Episode, TaskRef
from benchmarks.data_export.sources import ExportSourceError


def _calls(messages: list[dict[str, Any]], accepted: list[Any]) -> tuple[Call, ...]:
    results = {m.get("tool_call_id"): str(m.get("content") or "") for m in messages if m.get("role") == "tool"}
    calls: list[Call] = []
    step = 0
    for message in messages:
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        for raw in message["tool_calls"]:
            function = raw.get("function") or {}
            text = function.get("arguments")
            try:
                arguments = json.loads(text) if isinstance(text, str) else text
            except ValueError:
                arguments = None
            index = len(calls)
            calls.append(Call(str(raw.get("id") or f"call_{index}"), step, str(function.get("name") or ""),
                              arguments, text if isinstance(text, str) and arguments is None else None,
                              bool(accepted[index]) if index < len(accepted) else True,
                              results.get(raw.get("id"), "")))
        step += 1
    return tuple(calls)


def _episode(path: Path, number: int, line: dict[str, Any]) -> Episode | None:
    messages = [m for m in line.get("messages") or () if isinstance(m, dict)]
    if not messages or line.get("error"):
        return None
    first_reply = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))
    rest = messages[first_reply:]
    success = line.get("success")
    final = next((m.get("content") for m in reversed(rest) if m.get("role") == "assistant" and m.get("content")),
                 None)
    attempt = Attempt(0, success if isinstance(success, bool) else None, _calls(rest, line.get("calls_ok") or []),
                      final, None, messages=tuple(rest))
    task_id = str(line.get("id") or f"{path.stem}:{number}")
    contaminates = line.get("contaminates", "unknown")
    ref = TaskRef("env", path.name, task_id, str(line.get("group") or "env"), str(line.get("model") or "unknown"),
                  task_id, str(contaminates) if contaminates else None)
    return Episode(ref, 0, tuple(messages[:first_reply]), tuple(line.get("tools") or ()), (attempt,), 0, None)


def rollout_episodes(path: Path) -> Iterator[Episode]:
    """The episodes of a rollout file (episodes without a conversation, or untested, are skipped).

    Raises:
        ExportSourceError: A line is not JSON.
    """
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except ValueError as exc:
                raise ExportSourceError(f"{path}:{number}: not a rollout line: {exc}") from None
            episode = _episode(path, number, line) if isinstance(line, dict) else None
            if episode is not None:
                yield episode
