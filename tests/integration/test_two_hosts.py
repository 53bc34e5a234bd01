"""Two Gecko servers, one Redis: each server in its own network namespace (veth to this host) when the
test may make namespaces (root + iproute2), else two servers on separate loopback ports."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest

from tests.conftest import TOOLKITS_DIR
from tests.infra import require
from tests.integration.test_multiworker import assert_no_lost_update
from utils.netns import netns_available, veth_hosts
from utils.procs import gecko_server, redis_server

pytestmark = pytest.mark.integration


@contextmanager
def two_hosts(tmp_path, workers: int = 1) -> Iterator[tuple[str, str, str]]:
    """(url of A, url of B, how they are separated) sharing one throwaway redis-server."""
    with ExitStack() as stack:
        if netns_available():
            hosts = stack.enter_context(veth_hosts(2))
            redis = stack.enter_context(redis_server(bind=tuple(h.gateway for h in hosts)))
            port = redis.rsplit(":", 1)[1]
            urls = [stack.enter_context(gecko_server(
                [TOOLKITS_DIR], workers=workers, state_dir=tmp_path / h.name, host=h.address, prefix=h.prefix,
                extra=["--store", f"redis://{h.gateway}:{port}"])) for h in hosts]
            yield urls[0], urls[1], "network namespaces"
        else:
            redis = stack.enter_context(redis_server())
            urls = [stack.enter_context(gecko_server([TOOLKITS_DIR], workers=workers, state_dir=tmp_path / name,
                                                     extra=["--store", redis])) for name in "ab"]
            yield urls[0], urls[1], "loopback ports"


async def _split_writes(urls: list[str], sid: str, n: int) -> list[int]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    clients = [httpx.AsyncClient(base_url=url, limits=limits, timeout=60) for url in urls]
    try:
        responses = await asyncio.gather(*(
            clients[i % len(clients)].post("/notes/create_note", json={"title": f"w{i}", "body": "b"},
                                           headers={"X-Session-ID": sid}) for i in range(n)))
    finally:
        for client in clients:
            await client.aclose()
    return [r.status_code for r in responses]


def test_two_hosts_serve_the_same_sessions(tmp_path):
    require(shutil.which("redis-server"), "redis-server is not installed (CI installs the Debian package redis-server)")
    with two_hosts(tmp_path) as (a, b, how):
        print(f"two hosts separated by {how}: {a} {b}")
        assert httpx.get(f"{a}/health").json()["pid"] != httpx.get(f"{b}/health").json()["pid"]
        sid = httpx.post(f"{a}/sessions", json={"state": {"user": "ada"}}).json()["session_id"]
        r = httpx.post(f"{b}/notes/create_note", json={"title": "t", "body": "b"}, headers={"X-Session-ID": sid})
        assert r.status_code == 200 and r.headers["X-Gecko-State-Version"] == "1"
        child = httpx.post(f"{b}/sessions/{sid}/fork").json()
        assert child["state"]["user"] == "ada" and child["state"]["counts"] == {"notes/create_note": 1}
        assert httpx.get(f"{a}/sessions/{child['session_id']}").json()["state"] == child["state"]
        assert httpx.get(f"{a}/sessions/{sid}/state", params={"version": 0}).json()["state"] == {"user": "ada"}

        hot = httpx.get(f"{a}/session-id").json()["session_id"]
        assert asyncio.run(_split_writes([a, b], hot, 64)) == [200] * 64
        assert_no_lost_update(a, hot, 64)
        assert_no_lost_update(b, hot, 64)
