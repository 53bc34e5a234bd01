"""BFCL multi-turn tasks as RL episodes (`inference.env`): a ready-made suite of 800 episodes.

Each task becomes an `EpisodeSpec`: the first user turn is the task, the later turns are `follow_ups` (sent
when the agent answers), the toolkits are the task's involved classes (`data/bfcl/openapi/multi_turn/`, the
Gecko of `gecko bfcl-multi`), the initial state is the task's `initial_config` (per class, as the BFCL runner
initialises it) and `max_steps` leaves room for the ground truth. `oracle_actions` gives the ground truth as
actions (one step per gold call, then an answer per turn) for a scripted policy.

Departures from the official setting: an episode offers every function of its classes from the first turn
(`multi_turn_miss_func` holds some back until a later turn), and long-context scenarios are not loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.bfcl.categories import MULTI_TURN_CATEGORIES
from benchmarks.bfcl.loader import MultiTurnTask, load_category
from benchmarks.bfcl.oracle import multi_turn_oracle_calls
from inference.env import EpisodeSpec

NO_REQUEST = "(no new request: go on with the task)"
"""The user turn of an empty BFCL turn (miss_func's turn where held-out functions arrive)."""
STEP_MARGIN = 8
"""Steps an episode allows beyond its ground truth (calls plus one answer per turn)."""


def _turn_text(turn: Sequence[Any]) -> str:
    return "\n".join(m.content for m in turn if m.role == "user") or NO_REQUEST


def multi_turn_tasks(categories: Sequence[str] = MULTI_TURN_CATEGORIES) -> list[MultiTurnTask]:
    """The multi-turn tasks of `categories` (all four by default), in file order."""
    return [task for category in categories for task in load_category(category) if isinstance(task, MultiTurnTask)]


def episode_spec(task: MultiTurnTask) -> EpisodeSpec:
    """The episode of one multi-turn task."""
    turns = [_turn_text(turn) for turn in task.turns]
    gold_steps = sum(len(turn) for turn in task.ground_truth) + len(turns)
    return EpisodeSpec(task=turns[0], follow_ups=turns[1:], toolkits=list(task.involved_classes),
                       state=dict(task.initial_config), max_steps=gold_steps + STEP_MARGIN, id=task.id)


def multi_turn_episodes(categories: Sequence[str] = MULTI_TURN_CATEGORIES) -> list[EpisodeSpec]:
    """Every multi-turn task of `categories` as an episode spec."""
    return [episode_spec(task) for task in multi_turn_tasks(categories)]


def oracle_actions(task: MultiTurnTask) -> list[dict[str, Any]]:
    """The ground truth as actions: each gold call in its own step, then an answer closing each turn."""
    actions: list[dict[str, Any]] = []
    for index, calls in enumerate(multi_turn_oracle_calls(task)):
        actions += [{"tool_calls": [{"name": call.name, "arguments": call.arguments}]} for call in calls]
        actions.append({"answer": f"Turn {index + 1} is done."})
    return actions
