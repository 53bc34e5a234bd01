"""Redis session store: for several hosts. Needs the `redis` extra (`pip install -e .[redis]`).

Keys (prefix `gecko:`): `s:{id}` the record as a hash of JSON fields (not the state: the versions hold it, and
`base`/`base_bytes`/`delta_bytes` say where its last checkpoint is), `h:{id}` the history list,
`v:{id}` state versions by number (checkpoints and JSON-Patch deltas), `c:{id}` a sorted set of the
checkpoint numbers, `l:{id}` the lease (SET NX PX, `LEASE_SECONDS`, renewed while held, so a dead
holder blocks its session for at most that long), `w:{id}` "another process waits" (short expiry),
`sessions` a sorted set of expiries (the sweep), `workers` a sorted set of heartbeats. Every
session key carries the session's TTL. `commit` is one Lua script: version check, writes, trims,
status and tag indexes, lease release.

Listings (see `gecko.sessions.listing`) walk sorted sets scored by creation time: `ix:all`, `ix:st:{status}`
and `ix:t:{tag}`; `x:{id}` is the set of index keys that hold the session, so `delete` and the sweep can take
it out of every index after its record expired. These keys carry no TTL: the sweep removes them.

Connections come from a blocking pool of `pool_size`: a burst of calls beyond it waits for a free
connection (up to `POOL_WAIT_SECONDS`) instead of failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from gecko.sessions.listing import MAX_SCAN, SessionPage, SessionQuery, SessionSummary, page_of
from gecko.sessions.model import Commit, SessionBusy, SessionNotFound, SessionRecord, VersionConflict
from gecko.sessions.store import READ_ATTEMPTS, WORKER_LIVE_SECONDS, SessionStore
from gecko.sessions.versions import TRIM_EVERY, Retention
from utils.jsonutil import dumps_compact, loads

if TYPE_CHECKING:  # redis is an optional extra, imported when a Redis store is built
    from redis.typing import EncodableT, FieldT

log = logging.getLogger(__name__)
LEASE_SECONDS = 3.0
"""Expiry of a lease; the holder renews it every third of that, so only a dead holder lets it lapse."""
WANT_MS = 50
"""Lifetime of a 'waiting' mark (waiters refresh it at every poll)."""
POOL_WAIT_SECONDS = 30.0

_TRY = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('DEL', KEYS[2])
  return 1
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return redis.call('EXISTS', KEYS[2])
"""

_RENEW = """
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then redis.call('PEXPIRE', key, ARGV[1]) end
end
return 0
"""

# KEYS: s h v c l w sessions x
# ARGV: 1 expected version, 2 owner to release or '', 3 '1' when the state changed or '', 4 version body,
#       5 checkpoint '1'/'0',
#       6 history entry or '', 7 checklists or '', 8 config or '', 9 now, 10 expires, 11 ttl ms,
#       12 history limit, 13 max versions, 14 trim every, 15 session id, 16 index prefix,
#       17 new status or '', 18 all tags as JSON or '', 19.. index keys of the added tags
_COMMIT = """
local function release()
  if ARGV[2] ~= '' and redis.call('GET', KEYS[5]) == ARGV[2] then redis.call('DEL', KEYS[5]) end
end
if redis.call('EXISTS', KEYS[1]) == 0 then release() return {-2, 0, 0} end
local version = tonumber(redis.call('HGET', KEYS[1], 'version'))
if version ~= tonumber(ARGV[1]) then release() return {-1, 0, 0} end
if ARGV[3] ~= '' then
  version = version + 1
  redis.call('HSET', KEYS[1], 'version', version)
  redis.call('HSET', KEYS[3], tostring(version), ARGV[4])
  if ARGV[5] == '1' then
    redis.call('ZADD', KEYS[4], version, version)
    redis.call('HSET', KEYS[1], 'base', version, 'base_bytes', string.len(ARGV[4]), 'delta_bytes', 0)
  else
    redis.call('HINCRBY', KEYS[1], 'delta_bytes', string.len(ARGV[4]))
  end
  local keep = tonumber(ARGV[13])
  if keep > 0 and version % tonumber(ARGV[14]) == 0 and version - keep + 1 > 0 then
    local base = redis.call('ZREVRANGEBYSCORE', KEYS[4], version - keep + 1, '-inf', 'LIMIT', 0, 1)[1]
    if base then
      base = tonumber(base)
      local low = tonumber(redis.call('HGET', KEYS[1], 'vlow') or '0')
      for n = low, base - 1 do redis.call('HDEL', KEYS[3], tostring(n)) end
      if base > low then redis.call('HSET', KEYS[1], 'vlow', base) end
      redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. base)
    end
  end
end
local calls = tonumber(redis.call('HGET', KEYS[1], 'calls') or '0')
if ARGV[6] ~= '' then
  calls = calls + 1
  redis.call('HSET', KEYS[1], 'calls', calls)
  redis.call('RPUSH', KEYS[2], ARGV[6])
  local limit = tonumber(ARGV[12])
  if limit > 0 then redis.call('LTRIM', KEYS[2], -limit, -1) end
end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'checklists', ARGV[7]) end
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'config', ARGV[8]) end
local created = redis.call('HGET', KEYS[1], 'created')
if ARGV[17] ~= '' then
  local old = redis.call('HGET', KEYS[1], 'status') or 'new'
  redis.call('ZREM', ARGV[16] .. 'st:' .. old, ARGV[15])
  local key = ARGV[16] .. 'st:' .. ARGV[17]
  redis.call('ZADD', key, created, ARGV[15])
  redis.call('SADD', KEYS[8], key)
  redis.call('HSET', KEYS[1], 'status', ARGV[17])
end
if ARGV[18] ~= '' then redis.call('HSET', KEYS[1], 'tags', ARGV[18]) end
for i = 19, #ARGV do
  redis.call('ZADD', ARGV[i], created, ARGV[15])
  redis.call('SADD', KEYS[8], ARGV[i])
end
redis.call('HSET', KEYS[1], 'updated', ARGV[9], 'expires', ARGV[10])
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[11]) end
redis.call('ZADD', KEYS[7], ARGV[10], ARGV[15])
local others = 0
if ARGV[2] ~= '' then
  release()
  others = redis.call('EXISTS', KEYS[6])
end
return {version, calls, others}
"""


class RedisStore(SessionStore):
    """Sessions in Redis; TTL by Redis key expiry, plus the sweep for anything left behind."""

    backend = "redis"

    def __init__(self, url: str, retention: Retention, prefix: str = "gecko:", pool_size: int = 64) -> None:
        super().__init__(retention)
        try:
            import redis.asyncio as aioredis
            from redis.exceptions import ConnectionError as RedisConnectionError
            from redis.exceptions import TimeoutError as RedisTimeoutError
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ValueError("the redis store needs the redis package: pip install -e '.[redis]'") from exc
        self.unavailable_errors = (RedisConnectionError, RedisTimeoutError)
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=pool_size, timeout=POOL_WAIT_SECONDS,
                                                        decode_responses=True)
        self._client = aioredis.Redis(connection_pool=pool)
        self._p = prefix
        self._try = self._client.register_script(_TRY)
        self._release = self._client.register_script(_RELEASE)
        self._renew = self._client.register_script(_RENEW)
        self._commit_script = self._client.register_script(_COMMIT)
        self._renewer: asyncio.Task[None] | None = None

    def _k(self, kind: str, session_id: str) -> str:
        return f"{self._p}{kind}:{session_id}"

    def _keys(self, session_id: str) -> list[str]:
        return [self._k(kind, session_id) for kind in ("s", "h", "v", "c", "l", "w")]

    def _index(self, name: str) -> str:
        return f"{self._p}ix:{name}"

    def _tag_index(self, tag: str) -> str:
        return self._index(f"t:{tag}")

    def _ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    async def open(self) -> None:
        await self._client.ping()
        self._renewer = asyncio.create_task(self._renew_leases())

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        await self._client.aclose()

    async def _renew_leases(self) -> None:
        while True:
            await asyncio.sleep(LEASE_SECONDS / 3)
            held = self._held_leases()
            if not held:
                continue
            try:
                await self._renew(keys=[self._k("l", sid) for sid, _ in held],
                                  args=[int(LEASE_SECONDS * 1000), *(owner for _, owner in held)])
            except Exception:  # noqa: BLE001 - the next round retries; a lapsed lease is caught by the version check
                log.exception("could not renew session leases")

    @staticmethod
    def _encode(record: SessionRecord) -> dict[FieldT, EncodableT]:
        return {"id": record.id, "config": dumps_compact(record.config), "version": str(record.version),
                "calls": str(record.calls), "checklists": dumps_compact(record.checklists),
                "created": repr(record.created), "updated": repr(record.updated), "expires": repr(record.expires),
                "status": record.status, "tags": dumps_compact(record.tags), "base": str(record.base_version),
                "base_bytes": str(record.base_bytes), "delta_bytes": str(record.delta_bytes)}

    @staticmethod
    def _decode(d: dict[str, str]) -> SessionRecord:
        return SessionRecord(d["id"], loads(d["config"]), {}, int(d["version"]), int(d.get("calls", 0)),
                             loads(d["checklists"]), float(d["created"]), float(d["updated"]), float(d["expires"]),
                             d.get("status", "new"), loads(d.get("tags", "[]")), int(d.get("base", 0)),
                             int(d.get("base_bytes", 0)), int(d.get("delta_bytes", 0)))

    async def create(self, record: SessionRecord) -> None:
        record.expires = self.expiry()
        self.prepare_new(record)
        state = dumps_compact(record.state)
        record.base_version, record.base_bytes, record.delta_bytes = record.version, len(state), 0
        s, _, v, c, _, _ = self._keys(record.id)
        indexes = [self._index("all"), self._index(f"st:{record.status}"), *map(self._tag_index, record.tags)]
        pipe = self._client.pipeline(transaction=True)
        pipe.hset(s, mapping=self._encode(record))
        pipe.hset(v, str(record.version), state)
        pipe.zadd(c, {str(record.version): record.version})
        for key in (s, v, c):
            pipe.pexpire(key, self._ttl_ms())
        pipe.zadd(f"{self._p}sessions", {record.id: record.expires})
        for key in indexes:
            pipe.zadd(key, {record.id: record.created})
        pipe.sadd(self._k("x", record.id), *indexes)
        await pipe.execute()
        self._remember(record.id, record.created, record.version, loads(state))  # a copy the caller cannot change

    async def get(self, session_id: str) -> SessionRecord | None:
        for _ in range(READ_ATTEMPTS):
            raw = await self._client.hgetall(self._k("s", session_id))
            if not raw or float(raw["expires"]) < time.time():
                return None
            record = self._decode(raw)  # type: ignore[arg-type]  # str replies (decode_responses), untyped in redis-py
            if await self._load_state(record):
                return record
        raise SessionBusy(f"the state of session {session_id} kept changing while it was read; retry")

    async def delete(self, session_id: str) -> bool:
        self._forget(session_id)
        expires = await self._client.hget(self._k("s", session_id), "expires")
        existed = expires is not None and float(expires) >= time.time()
        await self._client.delete(*self._keys(session_id))
        await self._client.zrem(f"{self._p}sessions", session_id)
        await self._unindex(session_id)
        return existed

    async def _unindex(self, session_id: str) -> None:
        """Take the session out of every listing index."""
        held = self._k("x", session_id)
        indexes = await self._client.smembers(held)
        pipe = self._client.pipeline(transaction=False)
        for key in indexes:
            pipe.zrem(key, session_id)
        pipe.delete(held)
        await pipe.execute()

    _SUMMARY_FIELDS = ("created", "updated", "status", "calls", "version", "config", "tags", "expires")

    async def list_sessions(self, query: SessionQuery) -> SessionPage:
        if query.tags:
            driver = self._tag_index(query.tags[0])
        else:
            driver = self._index(f"st:{query.status}" if query.status else "all")
        top = "+inf" if query.cursor is None else repr(query.cursor[0])
        now, examined, skip = time.time(), 0, 0
        found: list[SessionSummary] = []
        stopped_at: tuple[float, str] | None = None
        batch = min(max(query.limit * 2, 64), 1000)
        while len(found) <= query.limit:
            rows: list[Any] = await self._client.zrevrangebyscore(driver, top, "-inf", start=skip, num=batch,
                                                                  withscores=True)
            if not rows:
                break
            skip += len(rows)
            pipe = self._client.pipeline(transaction=False)
            for sid, _ in rows:
                pipe.hmget(self._k("s", sid), self._SUMMARY_FIELDS)
            for (sid, created), fields in zip(rows, await pipe.execute()):
                if not query.before_cursor(created, sid):
                    continue
                examined += 1
                if fields[0] is not None and float(fields[7]) >= now:
                    created_s, updated, status, calls, version, config, tags, _ = fields
                    tag_list = loads(tags or "[]")
                    if query.matches(status or "new", tag_list):
                        found.append(SessionSummary(sid, float(created_s), float(updated), status or "new",
                                                    int(calls or 0), int(version), loads(config), tag_list))
                        if len(found) > query.limit:
                            break
                if examined >= MAX_SCAN:
                    stopped_at = (created, sid)
                    break
            if stopped_at is not None or len(rows) < batch:
                break
        page = page_of(found, query, stopped_at)
        if query.cursor is None and len(query.tags) + (query.status is not None) <= 1:
            page.total = int(await self._client.zcard(driver))  # may count sessions expired since the last sweep
        return page

    async def history(self, session_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        rows = await self._client.lrange(self._k("h", session_id), offset, offset + limit - 1)
        return [loads(r) for r in rows]

    async def history_tail(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        rows = await self._client.lrange(self._k("h", session_id), -limit, -1) if limit else []
        return [loads(r) for r in rows]

    async def _version_rows(self, session_id: str, version: int, after: int = -1) -> list[tuple[int, bool, Any]]:
        base = await self._client.zrevrangebyscore(self._k("c", session_id), version, "-inf", start=0, num=1)
        checkpoint = int(base[0]) if base else -1  # type: ignore[arg-type]  # a member name (str), untyped reply
        first = max(checkpoint, after + 1)
        if first > version:
            return []
        bodies = await self._client.hmget(self._k("v", session_id), [str(n) for n in range(first, version + 1)])
        return [(n, n == checkpoint, loads(body)) for n, body in zip(range(first, version + 1), bodies)
                if body is not None]

    async def count(self) -> int:
        return int(await self._client.zcount(f"{self._p}sessions", time.time(), "+inf"))

    async def purge_expired(self) -> int:
        key = f"{self._p}sessions"
        gone = await self._client.zrangebyscore(key, "-inf", time.time())
        for sid in gone:  # Redis expiry already removed most keys; this catches anything left behind
            await self._client.delete(*self._keys(sid))  # type: ignore[arg-type]  # str replies (decode_responses)
            await self._unindex(str(sid))
        if gone:
            await self._client.zrem(key, *gone)
        return len(gone)

    # -- the lease -------------------------------------------------------------------------
    async def _lease_try(self, session_id: str, owner: str) -> bool:
        return bool(await self._try(keys=[self._k("l", session_id), self._k("w", session_id)],
                                    args=[owner, int(LEASE_SECONDS * 1000), WANT_MS]))

    async def _lease_release(self, session_id: str, owner: str) -> bool:
        return bool(await self._release(keys=[self._k("l", session_id), self._k("w", session_id)], args=[owner]))

    async def _commit(self, record: SessionRecord, commit: Commit, release: str | None) -> tuple[int, int, bool]:
        now = time.time()
        changed = commit.state is not None and commit.stored is not None
        args: list[EncodableT] = [record.version, release or "", "1" if changed else "", commit.stored or "",
                                  "1" if commit.checkpoint else "0",
                dumps_compact(commit.history) if commit.history is not None else "",
                dumps_compact(commit.checklists) if commit.checklists is not None else "",
                dumps_compact(commit.config) if commit.config is not None else "",
                repr(now), repr(now + self.ttl), self._ttl_ms(), self.retention.history_limit,
                self.retention.max_versions, TRIM_EVERY, record.id, self._index(""), commit.status or "",
                dumps_compact(commit.tags) if commit.tags is not None else "",
                *(self._tag_index(tag) for tag in (commit.tags or ()) if tag not in record.tags)]
        keys = [*self._keys(record.id), f"{self._p}sessions", self._k("x", record.id)]
        version, calls, others = await self._commit_script(keys=keys, args=args)
        if version == -2:
            raise SessionNotFound(record.id)
        if version == -1:
            raise VersionConflict(f"session {record.id} changed during the call (expected version {record.version})")
        return int(version), int(calls), bool(others)

    async def heartbeat(self) -> None:
        await self._client.zadd(f"{self._p}workers", {self.worker_id: time.time()})

    async def live_workers(self) -> int:
        now = time.time()
        await self._client.zremrangebyscore(f"{self._p}workers", "-inf", now - 10 * WORKER_LIVE_SECONDS)
        return int(await self._client.zcount(f"{self._p}workers", now - WORKER_LIVE_SECONDS, "+inf"))
