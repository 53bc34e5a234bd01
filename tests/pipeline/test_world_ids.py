"""Id lookups of the world model (`find`, the id index, its carry-over to a changed collection) agree with a plain
scan of the records, duplicates, odd ids and records that are not objects included."""

from __future__ import annotations

import copy
import random
from typing import Any

import jsonpatch
import pytest

from gecko.pipeline.world.store import _INDEXES, _build_index, entries, find, id_index, index_changed, same_id
from gecko.sessions.versions import apply_shared, rebuild

ODD_IDS: list[Any] = [None, True, False, 0, 7, -3, "7", "x", "X1", 2.5, "007"]


def _scan(records: Any, id_field: str, record_id: Any) -> tuple[Any, Any] | None:
    """What `find` answers, by walking every record."""
    if isinstance(records, dict) and str(record_id) in records:
        return str(record_id), records[str(record_id)]
    for position, rid, record in entries(records, id_field):
        if same_id(rid, record_id):
            return position, record
    return None


def _record(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.1:
        return rng.choice(ODD_IDS)  # not an object: its own id
    if roll < 0.2:
        return {"name": "no id field"}
    return {"id": rng.choice(ODD_IDS + [rng.randint(0, 30), f"S{rng.randint(0, 30)}"]), "v": roll}


def _collection(rng: random.Random) -> dict[str, Any] | list[Any]:
    records = [_record(rng) for _ in range(rng.randint(0, 25))]
    if rng.random() < 0.5:
        return records
    return {str(rng.choice([rng.randint(0, 30), f"S{rng.randint(0, 30)}", "True", "None"])): r for r in records}


@pytest.mark.parametrize("seed", range(40))
def test_find_and_the_index_agree_with_a_scan(seed: int) -> None:
    rng = random.Random(seed)
    records = _collection(rng)
    for record_id in ODD_IDS + list(range(31)) + [f"S{i}" for i in range(31)] + ["True", "None"]:
        assert find(records, "id", record_id) == _scan(records, "id", record_id), record_id
    texts = {str(rid) for _, rid, _ in entries(records, "id")}
    index = id_index(records, "id")
    assert set(index.first) == texts
    numbers = [int(t) for t in texts if t.lstrip("-").isdigit()]
    assert index.top == (max(numbers) if numbers else None)


@pytest.mark.parametrize("seed", range(40))
def test_an_index_carried_over_to_a_changed_collection_is_the_one_it_would_build(seed: int) -> None:
    rng = random.Random(seed)
    old = _collection(rng)
    index = id_index(old, "id")
    if rng.random() < 0.5:
        _ = index.top  # known or not when carried over
    new: dict[str, Any] | list[Any]
    record = _record(rng)
    if isinstance(old, dict):
        new = dict(old)
        position: Any = rng.choice([*old, f"S{rng.randint(0, 40)}"]) if old else "S1"
        new[position] = record
    else:
        new = list(old)
        if old and rng.random() < 0.5:
            position = rng.randrange(len(old))
            new[position] = record
        else:
            new.append(record)
            position = len(new) - 1
    index_changed(old, new, "id", [position])
    carried = id_index(new, "id")
    fresh = _build_index(new, "id")
    assert carried.first == fresh.first and carried.top == fresh.top


# -- two workers: the index follows the deltas a worker catches up on ---------------------------------------------

POOL = [*(f"S{i}" for i in range(12)), *(str(i) for i in range(12))]


def _items(state: dict[str, Any]) -> Any:
    return state["tk"]["items"]


def _change(rng: random.Random, items: Any, step: int, unique: bool) -> list[dict[str, Any]]:
    """A delta on `/tk/items` as the world model (or a state updater) writes it: creates, field and id updates,
    deletes, a key removed and added again, list inserts; ids from a small pool, so they collide unless `unique`."""
    base = "/tk/items"
    kind = rng.random()

    def new_id() -> Any:
        if unique:
            return f"N{step}"
        return rng.choice([*POOL, int(rng.choice(POOL[12:])), None, True])

    if isinstance(items, dict):
        keys = list(items)
        if not keys or kind < 0.35:
            rid = new_id()
            key = str(rid) if unique or rng.random() < 0.7 else rng.choice(POOL)
            record: Any = {"id": rid, "n": step} if rng.random() < 0.9 or unique else f"plain{step}"
            return [{"op": "add", "path": f"{base}/{key}", "value": record}]
        key = rng.choice(keys)
        if kind < 0.6 and isinstance(items[key], dict):
            field = "id" if not unique and rng.random() < 0.4 else "n"
            return [{"op": "add", "path": f"{base}/{key}/{field}", "value": new_id() if field == "id" else step}]
        if kind < 0.8:
            return [{"op": "remove", "path": f"{base}/{key}"}]
        if kind < 0.9:  # removed and added again: the key is now the last
            return [{"op": "remove", "path": f"{base}/{key}"}, {"op": "add", "path": f"{base}/{key}",
                                                                "value": items[key]}]
        return [{"op": "add", "path": f"{base}/{new_id()}", "value": {"id": f"M{step}"}},
                {"op": "replace", "path": f"{base}/{key}", "value": {"id": new_id(), "n": step}}]
    if not items or kind < 0.35:
        return [{"op": "add", "path": f"{base}/-", "value": {"id": new_id(), "n": step}}]
    index = rng.randrange(len(items))
    if kind < 0.55 and isinstance(items[index], dict):
        return [{"op": "add", "path": f"{base}/{index}/id", "value": new_id()}]
    if kind < 0.7:
        return [{"op": "replace", "path": f"{base}/{index}", "value": rng.choice([{"id": new_id()}, new_id()])}]
    if kind < 0.85:
        return [{"op": "remove", "path": f"{base}/{rng.choice([index, len(items) - 1])}"}]
    return [{"op": "add", "path": f"{base}/{index}", "value": {"id": new_id()}}]


def _assert_index_exact(items: Any) -> None:
    """The index a worker holds for `items` (carried over, maybe many times) is the one a full build gives."""
    held = _INDEXES.cached(items, "id")
    if held is None:
        return
    fresh = _build_index(items, "id")
    assert (held.first, held.unique, held.top) == (fresh.first, fresh.unique, fresh.top)


@pytest.mark.parametrize("unique", [False, True])
@pytest.mark.parametrize("seed", range(30))
def test_the_index_two_workers_carry_through_their_deltas_is_a_full_rebuild(seed: int, unique: bool) -> None:
    rng = random.Random(seed)
    start: dict[str, Any] = {"tk": {"items": {} if rng.random() < 0.6 or unique else [], "other": 1}}
    deltas: list[list[dict[str, Any]]] = []  # deltas[v - 1] makes version v
    workers = [[0, copy.deepcopy(start)], [0, copy.deepcopy(start)]]  # [version, decoded state]
    truth = copy.deepcopy(start)
    for step in range(1, 120):
        worker = rng.choice(workers)
        if worker[0] < len(deltas):  # catch up on the other worker's deltas (one or several, as a store reads them)
            rows = [(v, False, copy.deepcopy(deltas[v - 1])) for v in range(worker[0] + 1, len(deltas) + 1)]
            worker[:] = [len(deltas), rebuild(rows, len(deltas), (worker[0], worker[1]))]
        items = _items(worker[1])
        assert items == _items(truth)
        _assert_index_exact(items)
        if rng.random() < 0.7:  # the worker's call looks ids up (then the index exists, to be carried over)
            index = id_index(items, "id")
            if rng.random() < 0.5:
                _ = index.top
            probe = rng.choice([*POOL, 3, None, True])
            assert find(items, "id", probe) == _scan(items, "id", probe)
        patch = _change(rng, items, step, unique)
        worker[1] = apply_shared(worker[1], copy.deepcopy(patch))  # its own write, as the world model made it
        worker[0] += 1
        deltas.append(patch)
        truth = jsonpatch.apply_patch(truth, copy.deepcopy(patch))
        _assert_index_exact(_items(worker[1]))
    for worker in workers:
        rows = [(v, False, copy.deepcopy(deltas[v - 1])) for v in range(worker[0] + 1, len(deltas) + 1)]
        state = rebuild(rows, len(deltas), (worker[0], worker[1]))
        assert state == truth
        _assert_index_exact(_items(state))


def test_catching_up_carries_the_index_instead_of_building_it() -> None:
    """Unique ids (the usual case): after the first build, neither worker builds an index again, however the writes
    alternate between them (creates, field updates, deletes)."""
    rng = random.Random(5)
    start: dict[str, Any] = {"tk": {"items": {f"A{i}": {"id": f"A{i}", "n": i} for i in range(500)}}}
    workers = [[0, copy.deepcopy(start)], [0, copy.deepcopy(start)]]
    deltas: list[list[dict[str, Any]]] = []
    for worker in workers:
        id_index(_items(worker[1]), "id")
    builds = _INDEXES.builds
    for step in range(1, 200):
        worker = workers[step % 2] if step < 100 else rng.choice(workers)
        if worker[0] < len(deltas):
            rows = [(v, False, copy.deepcopy(deltas[v - 1])) for v in range(worker[0] + 1, len(deltas) + 1)]
            worker[:] = [len(deltas), rebuild(rows, len(deltas), (worker[0], worker[1]))]
        items = _items(worker[1])
        assert find(items, "id", rng.choice(list(items))) is not None
        kind = rng.random()
        key = rng.choice(list(items))
        patch = ([{"op": "remove", "path": f"/tk/items/{key}"}] if kind < 0.2 else
                 [{"op": "add", "path": f"/tk/items/{key}/n", "value": -step}] if kind < 0.4 else
                 [{"op": "add", "path": f"/tk/items/B{step}", "value": {"id": f"B{step}", "n": step}}])
        worker[1] = apply_shared(worker[1], patch)
        worker[0] += 1
        deltas.append(patch)
        _assert_index_exact(_items(worker[1]))
    assert _INDEXES.builds == builds
