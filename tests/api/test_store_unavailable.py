"""A store that cannot be reached is a 503 problem with Retry-After, never a 500."""

from __future__ import annotations

import shutil

from tests.infra import require
from utils.procs import redis_server


def test_unreachable_redis_is_503(make_client):
    require(shutil.which("redis-server"), "redis-server is not installed (CI installs the Debian package redis-server)")
    with redis_server() as url:
        client = make_client(store=url)
        sid = client.get("/session-id").json()["session_id"]
    r = client.post("/notes/create_note", json={"title": "t", "body": "b"}, headers={"X-Session-ID": sid})
    assert r.status_code == 503 and r.headers["Retry-After"] == "1"
    assert r.json()["type"].endswith("store-unavailable")
