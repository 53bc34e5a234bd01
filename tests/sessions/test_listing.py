"""Listing sessions on every store: newest first, filters by label, toolkit, status and parent, keyset pages."""

from __future__ import annotations

import time

import pytest

from gecko.sessions import Commit, SessionRecord, open_store
from gecko.sessions.listing import SessionQuery, label_tag, next_status, parent_tag, toolkit_tag
from gecko.sessions.service import fork_session

BACKENDS = ["memory", "sqlite", "redis"]


@pytest.fixture(params=BACKENDS)
async def store(request, tmp_path):
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        s = open_store(url, sqlite_path=None, ttl=60)
        await s.open()
        await s._client.flushdb()
    else:
        s = open_store(request.param, sqlite_path=tmp_path / "listing.db", ttl=60)
        await s.open()
    yield s
    await s.close()


async def _call(store, session_id: str, entry: dict) -> None:
    async with store.holding(session_id) as hold:
        record = await store.read(hold)
        await store.commit(hold, record, Commit(history=entry))


async def _all(store, query: SessionQuery) -> list[str]:
    ids, cursor = [], None
    while True:
        page = await store.list_sessions(SessionQuery(query.tags, query.status, query.limit, cursor))
        ids += [s.id for s in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            return ids


def test_status_follows_the_history():
    assert next_status("new", {"tool": "a/b", "status": 200}) == "ok"
    assert next_status("ok", {"tool": "a/b", "status": 422}) == "rejected"
    assert next_status("rejected", {"tool": "a/b", "status": 200}) == "rejected"
    assert next_status("rejected", {"tool": "#judge", "status": 200, "verdict": {"success": True}}) == "success"
    assert next_status("success", {"tool": "a/b", "status": 422}) == "success"
    assert next_status("ok", {"tool": "#judge", "status": 502, "error": "down"}) == "unjudged"
    assert next_status("new", None) == "new"


async def test_newest_first_filters_and_pages(store):
    base = time.time()
    ids = []
    for i in range(25):
        labels = {"run": "r1" if i % 2 == 0 else "r2", "task": f"t{i}"}
        record = SessionRecord(id=f"s{i:02d}", config={"labels": labels, "toolkits": ["orders"] if i < 10 else []},
                               created=base + i)
        await store.create(record)
        ids.append(record.id)
    await _call(store, "s03", {"tool": "orders/place_order", "status": 422})
    await _call(store, "s12", {"tool": "notes/create_note", "status": 200})  # no toolkits config: tagged by use
    await _call(store, "s12", {"tool": "#judge", "status": 200, "verdict": {"success": False}})

    page = await store.list_sessions(SessionQuery(limit=10))
    assert [s.id for s in page.sessions] == ids[::-1][:10] and page.next_cursor is not None
    assert page.total == 25
    assert await _all(store, SessionQuery(limit=7)) == ids[::-1]
    assert await _all(store, SessionQuery(tags=(label_tag("run", "r1"),), limit=4)) == ids[::-2]
    assert await _all(store, SessionQuery(tags=(toolkit_tag("orders"),))) == ids[:10][::-1]
    assert await _all(store, SessionQuery(tags=(toolkit_tag("notes"),))) == ["s12"]
    assert await _all(store, SessionQuery(status="rejected")) == ["s03"]
    assert await _all(store, SessionQuery(status="failed")) == ["s12"]
    both = SessionQuery(tags=(label_tag("run", "r2"), toolkit_tag("orders")), status="rejected")
    assert await _all(store, both) == ["s03"]
    assert await _all(store, SessionQuery(tags=(label_tag("run", "r2"), label_tag("task", "t4")))) == []
    summary = (await store.list_sessions(SessionQuery(tags=(label_tag("task", "t12"),)))).sessions[0]
    public = summary.public()
    assert public["status"] == "failed" and public["calls"] == 2 and public["labels"] == {"run": "r1", "task": "t12"}
    assert public["toolkits"] == ["notes"]

    fork = await fork_session(store, "s03")
    children = await store.list_sessions(SessionQuery(tags=(parent_tag("s03"),)))
    assert [s.id for s in children.sessions] == [fork.id] and children.sessions[0].public()["parent"] == "s03"
    assert await store.delete("s03")
    assert "s03" not in await _all(store, SessionQuery())
    assert await _all(store, SessionQuery(status="rejected")) == []
