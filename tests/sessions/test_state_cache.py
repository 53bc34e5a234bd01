"""The decoded-state cache of each process: brought up to date with deltas, never wrong, never changed in place.

Two store instances on one SQLite file (or one Redis) stand for two worker processes.
"""

from __future__ import annotations

import copy
import random
import time

import jsonpatch
import pytest

from gecko.sessions import Commit, SessionRecord, open_store
from gecko.sessions.versions import Retention, apply_shared


def _step(rng: random.Random, state: dict, step: int) -> tuple[dict, list | None]:
    kind = rng.random()
    if kind < 0.05:
        return {"reset": step, "items": {}}, None  # a whole replacement (set-session-state)
    items = state.get("items", {})
    if kind < 0.25 and items:
        key = rng.choice(sorted(items))
        return ({**state, "items": {k: v for k, v in items.items() if k != key}},
                [{"op": "remove", "path": f"/items/{key}"}])
    if kind < 0.45 and items:
        key = rng.choice(sorted(items))
        return ({**state, "items": {**items, key: {**items[key], "n": step}}},
                [{"op": "replace", "path": f"/items/{key}/n", "value": step}])
    record = {"id": f"I{step}", "n": step, "tags": [str(step)]}
    return ({**state, "items": {**items, f"I{step}": record}, "last": step},
            [{"op": "add", "path": f"/items/I{step}", "value": record}, {"op": "add", "path": "/last", "value": step}])


@pytest.fixture(params=["sqlite", "redis"])
async def two_processes(request, tmp_path):
    """Two stores on the same backend, a small checkpoint interval."""
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        stores = [open_store(url, sqlite_path=None, ttl=60, checkpoint_every=3) for _ in range(2)]
    else:
        path = tmp_path / "shared.db"
        stores = [open_store("sqlite", sqlite_path=path, ttl=60, checkpoint_every=3) for _ in range(2)]
    for store in stores:
        await store.open()
    yield stores
    for store in stores:
        await store.close()


async def test_two_processes_see_every_version_through_their_caches(two_processes):
    a, b = two_processes
    rng = random.Random(11)
    record = SessionRecord(id=f"cache-{time.time_ns()}", state={"items": {}})
    await a.create(record)
    states = [copy.deepcopy(record.state)]
    for step in range(1, 160):
        writer = a if rng.random() < 0.5 else b
        async with writer.holding(record.id) as hold:
            current = await writer.read(hold)
            assert current.state == states[-1], step  # whichever process read it, from its cache or not
            state, patch = _step(rng, current.state, step)
            assert await writer.commit(hold, current, Commit(state=state, patch=patch, history={"s": step})) == step
        states.append(copy.deepcopy(state))
    for store in (a, b):
        assert (await store.get(record.id)).state == states[-1]
    for version in range(0, len(states), 7):
        assert await b.state_at(record.id, version, len(states) - 1) == states[version]


async def test_a_cached_state_is_never_changed_by_the_next_version(two_processes):
    a, b = two_processes
    record = SessionRecord(id=f"immutable-{time.time_ns()}", state={"items": {"I0": {"id": "I0", "n": 0}}})
    await a.create(record)
    seen = await b.get(record.id)  # b caches version 0
    before = copy.deepcopy(seen.state)
    async with a.holding(record.id) as hold:
        current = await a.read(hold)
        new = {"items": {"I0": {"id": "I0", "n": 1}, "I1": {"id": "I1", "n": 1}}}
        await a.commit(hold, current, Commit(state=new, patch=[
            {"op": "replace", "path": "/items/I0/n", "value": 1},
            {"op": "add", "path": "/items/I1", "value": {"id": "I1", "n": 1}}]))
    assert (await b.get(record.id)).state == new  # b applied the delta to its cached version 0 ...
    assert seen.state == before  # ... without touching the state it handed out before


def test_checkpoints_follow_the_size_of_the_changes():
    retention = Retention(ttl=60, checkpoint_every=4)

    class Since:
        base_version, base_bytes, delta_bytes = 10, 1000, 0

    since = Since()
    assert retention.is_checkpoint(11, None, since)  # no patch: stored whole
    assert not retention.is_checkpoint(12, 2000, since)  # fewer than checkpoint_every versions since the last
    assert not retention.is_checkpoint(20, 999, since)  # the deltas since are smaller than the checkpoint
    since.delta_bytes = 900
    assert retention.is_checkpoint(20, 100, since)


@pytest.mark.parametrize("patch", [
    [{"op": "add", "path": "/a/b/-", "value": {"x": 1}}, {"op": "add", "path": "/a/b/0/y", "value": 2}],
    [{"op": "remove", "path": "/a/c"}, {"op": "replace", "path": "/d", "value": [1]}],
    [{"op": "add", "path": "/a/b/1", "value": "z"}, {"op": "remove", "path": "/a/b/0"}],
    [{"op": "move", "from": "/a/c", "path": "/e"}],
    [{"op": "add", "path": "", "value": {"whole": True}}, {"op": "add", "path": "/more", "value": 1}],
])
def test_apply_shared_matches_jsonpatch_and_leaves_the_original(patch):
    state = {"a": {"b": [{"k": 0}, {"k": 1}], "c": {"deep": [1, 2]}}, "d": 4}
    original = copy.deepcopy(state)
    expected = jsonpatch.apply_patch(copy.deepcopy(state), copy.deepcopy(patch))
    assert apply_shared(state, patch) == expected
    assert state == original


def test_apply_shared_refuses_a_patch_that_does_not_apply():
    with pytest.raises(jsonpatch.JsonPatchException):
        apply_shared({"a": {}}, [{"op": "remove", "path": "/a/missing"}])
    with pytest.raises(jsonpatch.JsonPatchException):
        apply_shared({"a": [1]}, [{"op": "replace", "path": "/a/5", "value": 0}])
