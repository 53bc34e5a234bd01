"""Id lookups of the world model (`find`, the id index, its carry-over to a changed collection) agree with a plain
scan of the records, duplicates, odd ids and records that are not objects included."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gecko.pipeline.world.store import ABSENT, _build_index, entries, find, id_index, index_stored, same_id

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
        previous = new.get(position, ABSENT)
        new[position] = record
    else:
        new = list(old)
        if old and rng.random() < 0.5:
            position = rng.randrange(len(old))
            previous = new[position]
            new[position] = record
        else:
            new.append(record)
            position, previous = len(new) - 1, ABSENT
    index_stored(old, new, "id", position, previous)
    carried = id_index(new, "id")
    fresh = _build_index(new, "id")
    assert carried.first == fresh.first and carried.top == fresh.top
