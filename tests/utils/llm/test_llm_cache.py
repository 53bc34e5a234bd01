"""The SQLite reply cache: content keys, persistence, several processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from utils.llm import LLMCache, cache_key

WRITER = textwrap.dedent("""
    import sys
    from utils.llm.cache import LLMCache
    cache = LLMCache(sys.argv[1], busy_timeout_ms=20000)
    tag = sys.argv[2]
    for i in range(int(sys.argv[3])):
        cache.put_sync(f"{tag}-{i}", {"text": f"{tag} {i}"}, "m")
        assert cache.get_sync(f"{tag}-{i}") == {"text": f"{tag} {i}"}
    cache.close()
""")


def test_key_is_canonical() -> None:
    a = cache_key({"model": "m", "messages": [{"role": "user", "content": "x"}], "params": {"t": 0, "n": 1}})
    b = cache_key({"params": {"n": 1, "t": 0}, "messages": [{"content": "x", "role": "user"}], "model": "m"})
    assert a == b and len(a) == 64
    assert cache_key({"model": "m", "prompt_version": "2"}) != cache_key({"model": "m", "prompt_version": "3"})


async def test_round_trip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.db"
    cache = LLMCache(path)
    assert await cache.get("k") is None
    await cache.put("k", {"text": "héllo", "n": 1}, "gpt")
    assert await cache.get("k") == {"text": "héllo", "n": 1}
    assert len(cache) == 1
    cache.close()
    reopened = LLMCache(path)
    assert reopened.get_sync("k") == {"text": "héllo", "n": 1}
    reopened.clear()
    assert len(reopened) == 0
    reopened.close()
    with pytest.raises(RuntimeError):
        reopened.get_sync("k")


async def test_wal_mode(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "c.db")
    mode = cache._connect().execute("PRAGMA journal_mode").fetchone()[0]
    assert mode.lower() == "wal"
    cache.close()


def test_two_processes_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    LLMCache(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, "150"], cwd=Path.cwd(),
                              stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    cache = LLMCache(path)
    assert len(cache) == 300
    assert cache.get_sync("a-149") == {"text": "a 149"} and cache.get_sync("b-0") == {"text": "b 0"}
    cache.close()
