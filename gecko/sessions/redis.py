"""Redis session store: for several hosts. Needs the `redis` extra (`pip install -e .[redis]`).

Keys (prefix `gecko:`): `s:{id}` the record as a hash of JSON fields (with a TTL), `l:{id}` the lease (SET NX PX),
`h:{id}` the history list, `v:{id}` snapshots by version, `sessions` a sorted set of expiries,
`workers` a sorted set of heartbeats. `finish` is one Lua script: version check, writes, lease release.
"""

from __future__ import annotations

import json
import time
from typing import Any

from gecko.sessions.model import Commit, SessionRecord, VersionConflict
from gecko.sessions.store import LEASE_SECONDS, WORKER_LIVE_SECONDS, SessionStore

_FINISH = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local version = tonumber(redis.call('HGET', KEYS[1], 'version'))
if version ~= tonumber(ARGV[1]) then
  if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
  return -1
end
if ARGV[4] ~= '' then
  version = version + 1
  redis.call('HSET', KEYS[1], 'state', ARGV[4], 'version', version)
  redis.call('HSET', KEYS[4], tostring(version), ARGV[4])
  redis.call('HDEL', KEYS[4], tostring(version - tonumber(ARGV[7])))
end
redis.call('HSET', KEYS[1], 'updated', ARGV[8], 'expires', ARGV[9])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'checklists', ARGV[3]) end
if ARGV[10] ~= '' then redis.call('HSET', KEYS[1], 'config', ARGV[10]) end
if ARGV[6] ~= '' then
  redis.call('RPUSH', KEYS[3], ARGV[6])
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[7]), -1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
redis.call('PEXPIRE', KEYS[4], ARGV[5])
redis.call('ZADD', KEYS[5], ARGV[9], KEYS[1])
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
return version
"""


class RedisStore(SessionStore):
    """Sessions in Redis; TTL handled by Redis key expiry."""

    backend = "redis"

    def __init__(self, url: str, ttl: float, history_limit: int = 1000, prefix: str = "gecko:") -> None:
        super().__init__(ttl, history_limit)
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ValueError("the redis store needs the redis package: pip install -e '.[redis]'") from exc
        self._client = aioredis.from_url(url, decode_responses=True)
        self._p = prefix
        self._finish = self._client.register_script(_FINISH)

    def _k(self, kind: str, session_id: str) -> str:
        return f"{self._p}{kind}:{session_id}"

    def _ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    async def open(self) -> None:
        await self._client.ping()

    async def close(self) -> None:
        await self._client.aclose()

    @staticmethod
    def _encode(record: SessionRecord) -> dict[str, str]:
        return {"id": record.id, "config": json.dumps(record.config), "state": json.dumps(record.state),
                "version": str(record.version), "checklists": json.dumps(record.checklists),
                "created": repr(record.created), "updated": repr(record.updated), "expires": repr(record.expires)}

    @staticmethod
    def _decode(d: dict[str, str]) -> SessionRecord:
        return SessionRecord(d["id"], json.loads(d["config"]), json.loads(d["state"]), int(d["version"]),
                             json.loads(d["checklists"]), float(d["created"]), float(d["updated"]),
                             float(d["expires"]))

    async def create(self, record: SessionRecord) -> None:
        record.expires = self.expiry()
        key = self._k("s", record.id)
        pipe = self._client.pipeline(transaction=True)
        pipe.hset(key, mapping=self._encode(record))
        pipe.pexpire(key, self._ttl_ms())
        pipe.hset(self._k("v", record.id), str(record.version), json.dumps(record.state))
        pipe.pexpire(self._k("v", record.id), self._ttl_ms())
        pipe.zadd(f"{self._p}sessions", {key: record.expires})
        await pipe.execute()

    async def get(self, session_id: str) -> SessionRecord | None:
        raw = await self._client.hgetall(self._k("s", session_id))
        return self._decode(raw) if raw else None

    async def delete(self, session_id: str) -> bool:
        removed = await self._client.delete(self._k("s", session_id), self._k("h", session_id),
                                            self._k("v", session_id), self._k("l", session_id))
        await self._client.zrem(f"{self._p}sessions", self._k("s", session_id))
        return removed > 0

    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        rows = await self._client.lrange(self._k("h", session_id), offset, offset + limit - 1)
        return [json.loads(r) for r in rows]

    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        rows = await self._client.lrange(self._k("h", session_id), -limit, -1) if limit else []
        return [json.loads(r) for r in rows]

    async def snapshot(self, session_id: str, version: int) -> dict[str, Any] | None:
        raw = await self._client.hget(self._k("v", session_id), str(version))
        return json.loads(raw) if raw else None

    async def count(self) -> int:
        return int(await self._client.zcount(f"{self._p}sessions", time.time(), "+inf"))

    async def purge_expired(self) -> int:
        return int(await self._client.zremrangebyscore(f"{self._p}sessions", "-inf", time.time()))

    async def _try_begin(self, session_id: str, owner: str, exclusive: bool) -> SessionRecord | None | bool:
        if not exclusive:
            return await self.get(session_id)
        got = await self._client.set(self._k("l", session_id), owner, nx=True, px=int(LEASE_SECONDS * 1000))
        if not got:
            return False if await self._client.exists(self._k("s", session_id)) else None
        record = await self.get(session_id)
        if record is None:
            await self.abort(session_id, owner)
        return record

    async def finish(self, session_id: str, owner: str, expected_version: int, commit: Commit) -> int:
        now = time.time()
        keys = [self._k("s", session_id), self._k("l", session_id), self._k("h", session_id),
                self._k("v", session_id), f"{self._p}sessions"]
        args = [expected_version, owner,
                json.dumps(commit.checklists) if commit.checklists is not None else "",
                json.dumps(commit.state) if commit.state is not None else "",
                self._ttl_ms(), json.dumps(commit.history) if commit.history is not None else "",
                max(self.history_limit, 1), repr(now), repr(now + self.ttl),
                json.dumps(commit.config) if commit.config is not None else ""]
        version = int(await self._finish(keys=keys, args=args))
        if version < 0:
            raise VersionConflict(f"session {session_id} changed during the call (expected version {expected_version})")
        return version

    async def abort(self, session_id: str, owner: str) -> None:
        key = self._k("l", session_id)
        if await self._client.get(key) == owner:
            await self._client.delete(key)

    async def heartbeat(self) -> None:
        await self._client.zadd(f"{self._p}workers", {self.worker_id: time.time()})

    async def live_workers(self) -> int:
        now = time.time()
        await self._client.zremrangebyscore(f"{self._p}workers", "-inf", now - 10 * WORKER_LIVE_SECONDS)
        return int(await self._client.zcount(f"{self._p}workers", now - WORKER_LIVE_SECONDS, "+inf"))
