"""The shared embedding cache (issue 31.8): a long build elsewhere never holds up another index.

The lock next to the cache file used to be held for a whole build (another server held it for 28 minutes; every
default search waited 20 s and answered 503). Now it is held only to merge one finished chunk into the file.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from gecko.toolkits import search_dense
from gecko.toolkits.search_dense import DenseIndex, all_cached


class _SlowEncoder:
    """A stand-in for the sentence encoder: deterministic vectors, `delay` seconds per call."""

    identity = "fake-encoder"
    dim = 4

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def encode(self, texts: Sequence[str], max_tokens: int) -> np.ndarray:
        time.sleep(self.delay)
        rows = [[len(t), sum(map(ord, t)) % 97, 1.0, 2.0] for t in texts]
        vectors = np.asarray(rows, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_long_build_elsewhere_does_not_hold_up_another_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(search_dense, "CHUNK_TOOLS", 2)
    slow_texts = [f"slow tool {i}" for i in range(8)]  # 4 chunks of 0.5 s
    slow = threading.Thread(target=DenseIndex, args=(_SlowEncoder(0.5), slow_texts, tmp_path))
    slow.start()
    time.sleep(0.3)  # the slow build is embedding its first chunk
    start = time.perf_counter()
    quick = DenseIndex(_SlowEncoder(0.0), ["quick tool"], tmp_path)
    took = time.perf_counter() - start
    slow.join(timeout=30)
    assert not slow.is_alive()
    assert took < 0.5 and quick.build.embedded == 1, took
    assert all_cached("fake-encoder", [*slow_texts, "quick tool"], tmp_path)  # neither build lost the other's rows


def test_concurrent_builders_agree_and_keep_every_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(search_dense, "CHUNK_TOOLS", 2)
    texts = [f"tool {i}" for i in range(8)]
    builds: list[DenseIndex] = []
    threads = [threading.Thread(target=lambda: builds.append(DenseIndex(_SlowEncoder(0.2), texts, tmp_path)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(builds) == 2 and np.array_equal(builds[0].vectors, builds[1].vectors)
    assert all_cached("fake-encoder", texts, tmp_path)
