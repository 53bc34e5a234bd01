"""Changes in place within a chain (`gecko.sessions.owned`): the same states and patches as copying, and never a
change to a state the chain did not make.

A chain of world-model changes that shares an `Owned` changes the collections it created in place instead of copying
them. Random chains of creates, updates, closes and deletes, on an object collection seeded from the defaults and on
a list collection, are run twice (copying, and in place) and must agree call by call; the state the chain started
from must come out untouched; the patches, replayed on the start, must give the final state; and every id index the
process holds must be the one a full build gives.
"""

from __future__ import annotations

import asyncio
import copy
import random
from pathlib import Path
from typing import Any

import jsonpatch
import pytest

from gecko.pipeline.stages import RealCall
from gecko.pipeline.state.rules import RulesStateUpdater
from gecko.pipeline.world import world_change
from gecko.pipeline.world.store import _INDEXES, _build_index, id_index
from gecko.sessions.owned import Owned
from gecko.toolkits.loader import build_toolkit
from tests.pipeline.test_world_model import HELPDESK, TODO


def _ops() -> dict[str, Any]:
    helpdesk = build_toolkit(Path("helpdesk.json"), copy.deepcopy(HELPDESK))
    todo = build_toolkit(Path("todo.json"), copy.deepcopy(TODO))
    return {**{f"helpdesk/{k}": v for k, v in helpdesk.operations.items()},
            **{f"todo/{k}": v for k, v in todo.operations.items()}}


OPS = _ops()


def _call(rng: random.Random, step: int, state: dict[str, Any]) -> tuple[str, dict[str, Any], Any]:
    """(tool, arguments, response) of a random write the world model places."""
    tickets = list(state.get("helpdesk", {}).get("tickets", {"T1": None}))
    kind = rng.random()
    if kind < 0.3:
        return "helpdesk/create_ticket", {"title": f"t{step}", "priority": 1 + step % 5}, {
            "ticket_id": f"K{rng.randint(0, 60)}", "title": f"t{step}", "status": "open", "priority": 1}
    if kind < 0.45 and tickets:
        return "helpdesk/update_ticket", {"ticket_id": rng.choice(tickets), "updates": {"title": f"u{step}"}}, {}
    if kind < 0.55 and tickets:
        return "helpdesk/close_ticket", {"ticket_id": rng.choice(tickets)}, {}
    if kind < 0.7 and tickets:
        return "helpdesk/delete_ticket", {"ticket_id": rng.choice([*tickets, "nope"])}, {"deleted": True}
    return "todo/add_task", {"text": f"x{step}"}, {"id": step, "text": f"x{step}"}


def _indexes_exact() -> None:
    for records, id_field, length, index in list(_INDEXES._entries.values()):
        assert length == len(records)
        fresh = _build_index(records, id_field)
        assert (index.first, index.unique, index.top) == (fresh.first, fresh.unique, fresh.top)


# Quick seeds, one per start shape: the toolkit's defaults (2, 4), 0 to 4 seeded tickets (14, 1, 7, 0, 6);
# `--all-seeds` (make test-latest) runs all 25.
@pytest.mark.seeds(quick=(0, 1, 2, 4, 6, 7, 14), full=range(25))
def test_a_chain_in_place_gives_the_states_and_patches_of_copying_and_leaves_its_start_alone(seed: int) -> None:
    rng = random.Random(seed)
    start: dict[str, Any] = {"helpdesk": {"tickets": {f"S{i}": {"ticket_id": f"S{i}", "title": "s", "status": "open",
                                                             "priority": 1} for i in range(rng.randint(0, 4))}}}
    if rng.random() < 0.5:
        start = {}  # the tickets come from the toolkit's defaults, the tasks start empty
    untouched = copy.deepcopy(start)
    copying, in_place, owned = start, start, Owned()
    patches: list[dict[str, Any]] = []
    for step in range(60):
        tool, arguments, response = _call(rng, step, copying)
        seed_text = f"{seed}.{step}"
        expected = world_change(copying, OPS[tool], arguments, response, seed_text)
        got = world_change(in_place, OPS[tool], arguments, response, seed_text, owned)
        assert (got is None) == (expected is None), tool
        if expected is None or got is None:
            continue
        assert got[0] == expected[0], (step, tool)
        assert got[1] == expected[1], (step, tool)
        copying, in_place = expected[0], got[0]
        patches += copy.deepcopy(got[1])
        if rng.random() < 0.5:  # the response side of the next call looks ids up: indexes exist to follow
            for view in in_place.get("helpdesk", {}).values():
                if isinstance(view, dict):
                    id_index(view, "ticket_id")
        _indexes_exact()
    assert start == untouched  # the chain changed in place only what it made itself
    assert jsonpatch.apply_patch(copy.deepcopy(start), patches) == in_place


def test_a_real_sync_of_many_calls_copies_a_collection_once_and_replays_exactly() -> None:
    """`/update-state-from-real` with several creates into a list collection the defaults seed: one chain, so the
    collection is copied once; the patch, replayed, gives the state (no record twice)."""
    calls = [RealCall(name="add_task", arguments={"text": f"r{i}"}, result={"id": 100 + i, "text": f"r{i}"},
                      toolkit="todo", operation=OPS["todo/add_task"], access="write") for i in range(5)]
    start: dict[str, Any] = {}
    result = asyncio.run(RulesStateUpdater().apply_real(start, calls, []))
    assert start == {}
    assert [t["id"] for t in result.state["todo"]["tasks"]] == [100, 101, 102, 103, 104]
    assert jsonpatch.apply_patch({}, copy.deepcopy(result.patch)) == result.state
