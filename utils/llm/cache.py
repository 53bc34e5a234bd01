"""Content-addressed cache of LLM replies in SQLite.

The key is the sha256 of the canonical JSON (sorted keys, no whitespace) of everything that decides
the reply: endpoint and model, messages, tools, sampling parameters and the prompt version. Only
successful replies are stored. Several worker processes share one file: WAL journal, a busy timeout,
one connection per thread, and every call runs in `asyncio.to_thread` so the event loop never blocks.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from utils.jsonutil import canonical_json

_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    model TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(payload: dict[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of `payload`."""
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class LLMCache:
    """A SQLite-backed map from cache keys to reply documents (JSON objects).

    Args:
        path: database file; its directory is created.
        busy_timeout_ms: how long a writer waits for another process's lock.
    """

    def __init__(self, path: Path | str, busy_timeout_ms: int = 10_000) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._lock = threading.Lock()
        """Guards `_connections`, the list used to close every thread's connection."""
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        self._connect()

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError("LLMCache is closed")
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        conn = sqlite3.connect(self.path, timeout=self._busy_timeout_ms / 1000, check_same_thread=False,
                               isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(_SCHEMA)
        self._local.conn = conn
        with self._lock:
            self._connections.append(conn)
        return conn

    def get_sync(self, key: str) -> dict[str, Any] | None:
        """The stored document for `key`, or None."""
        row = self._connect().execute("SELECT value FROM llm_cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def put_sync(self, key: str, value: dict[str, Any], model: str = "") -> None:
        """Store `value` under `key` (last writer wins; equal keys hold equal replies)."""
        self._connect().execute(
            "INSERT OR REPLACE INTO llm_cache (key, value, model, created) VALUES (?, ?, ?, ?)",
            (key, json.dumps(value, ensure_ascii=False), model, time.time()),
        )

    async def get(self, key: str) -> dict[str, Any] | None:
        """Async `get_sync`, run in a worker thread."""
        return await asyncio.to_thread(self.get_sync, key)

    async def put(self, key: str, value: dict[str, Any], model: str = "") -> None:
        """Async `put_sync`, run in a worker thread."""
        await asyncio.to_thread(self.put_sync, key, value, model)

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0])

    def clear(self) -> None:
        """Delete every entry."""
        self._connect().execute("DELETE FROM llm_cache")

    def close(self) -> None:
        """Close the connections of every thread."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()
