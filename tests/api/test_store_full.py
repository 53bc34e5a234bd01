"""A full disk under the SQLite store (issue 31.9): every write is a retryable 503, logged once a minute.

SQLite's own full-disk error (SQLITE_FULL) is produced by capping the writer's file at its current size
(`PRAGMA max_page_count`), the error a full disk gives, without filling one. It was a 500 with a traceback logged
per request (3,834 in ten seconds).
"""

from __future__ import annotations

import logging

from utils.ratelog import EveryInterval


def test_a_full_disk_is_a_retryable_503_logged_once(make_client, caplog):
    client = make_client(store="sqlite")
    store = client.app.state.gecko.store

    def cap(conn):
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        return conn.execute(f"PRAGMA max_page_count={pages}").fetchall()

    client.portal.call(store._write, cap)
    big = {f"blob{i}": "x" * 50_000 for i in range(4)}
    with caplog.at_level(logging.WARNING, logger="gecko"):
        replies = [client.post("/sessions", json={"state": big}) for _ in range(20)]
    assert {r.status_code for r in replies} == {503}, replies[0].text
    assert replies[0].headers["retry-after"] == "1" and "disk" in replies[0].json()["detail"]
    lines = [r for r in caplog.records if "session store unavailable" in r.getMessage()]
    assert len(lines) == 1 and "Traceback" not in caplog.text and not any(r.exc_info for r in caplog.records)
    assert client.get("/health").status_code == 200


def test_every_interval_counts_what_it_leaves_out():
    said = EveryInterval(60.0)
    assert said.due() == 0 and said.due() is None and said.due() is None
    said._last -= 61
    assert said.due() == 2


def test_a_restart_on_a_full_disk_serves(make_client, monkeypatch):
    from gecko.sessions.sqlite import SqliteStore, StoreFull

    async def full(self):
        raise StoreFull("the disk of the session store is full; free space and retry")

    monkeypatch.setattr(SqliteStore, "heartbeat", full)
    client = make_client(store="sqlite")  # the start-up heartbeat fails: it used to stop the worker
    assert client.get("/health").status_code == 200
