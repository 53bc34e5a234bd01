"""Dense tool retrieval: every tool embedded once by the sentence encoder, ranked by cosine similarity to the query.

Embedding the whole open-world pool (~9,900 tools) in numpy takes minutes on two cores, so tool embeddings are cached
on disk, keyed by the model's identity, the cut and a hash of each tool's text: a later start reads them back and
embeds only the tools it has not seen. One file per model and cut (`<cache dir>/<identity>-t<cut>.npz`), rewritten
whole (temporary file, then `os.replace`, so a reader never needs a lock) with what it held plus the new rows. The
lock file next to it is held only while one finished chunk is merged into the file (a read and a write), never while
embedding: a server building a large pool never stalls another server's search. Builders running at once (the
workers of one server) each start at a different chunk and skip what the others have written meanwhile.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gecko.toolkits.search_encoder import SentenceEncoder

log = logging.getLogger("gecko.search")

TOOL_TOKENS = 128
"""Word pieces embedded per tool: its app, name, summary and the start of its description fit; more costs time."""
CHUNK_TOOLS = 1000
"""Tools embedded between two writes of the cache (an interrupted build loses at most one chunk)."""
QUERY_TOKENS = 256
"""Word pieces embedded per query: the model's training length."""
_KEY_BYTES = 16
ARRAY_READS = threading.Lock()
"""Held while numpy reads an array file's header, which it parses with `ast.literal_eval`. CPython 3.11 keeps the
syntax-tree builder's recursion depth in state its threads share, and two threads parsing at once can fail with
`SystemError: AST constructor recursion depth mismatch` (python/cpython#106905): two builders of one index in one
process did (`tests/toolkits/test_search_dense_lock.py`)."""


def text_key(text: str) -> bytes:
    """The cache key of one text (a hash of it)."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:_KEY_BYTES]


def cache_path(cache_dir: Path, identity: str, tokens: int) -> Path:
    """The cache file of the embeddings by the model `identity` of texts cut to `tokens` word pieces."""
    return cache_dir / f"{identity}-t{tokens}.npz"


def cache_fetch(path: Path, dim: int) -> dict[bytes, np.ndarray]:
    """The cached embeddings, by text key; an unreadable or mismatched file counts as empty (it is rebuilt)."""
    try:
        with ARRAY_READS, np.load(path, allow_pickle=False) as data:
            keys, vectors = _read_keys(data["keys"]), data["vectors"]
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError) as exc:
        log.warning("tool search: ignoring the unreadable embedding cache %s (%s)", path, exc)
        return {}
    if keys is None or vectors.ndim != 2 or vectors.shape[1] != dim or len(keys) != len(vectors):
        log.warning("tool search: ignoring the embedding cache %s (shape %s)", path, vectors.shape)
        return {}
    return {key: vectors[i] for i, key in enumerate(keys)}


def _read_keys(array: np.ndarray) -> list[bytes] | None:
    """The text keys of a cache file: rows of `_KEY_BYTES` bytes (a byte-string array would drop a key's trailing
    zero bytes); None for any other layout (the file is then rebuilt)."""
    if array.dtype != np.uint8 or array.ndim != 2 or array.shape[1] != _KEY_BYTES:
        return None
    return [row.tobytes() for row in array]


def cache_store(path: Path, rows: dict[bytes, np.ndarray]) -> None:
    """Write every row to the cache file, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows)
    keys = np.frombuffer(b"".join(ordered), dtype=np.uint8).reshape(len(ordered), _KEY_BYTES)
    vectors = np.stack([rows[key] for key in ordered]).astype(np.float32) if ordered else np.zeros((0, 0))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, keys=keys, vectors=vectors)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def all_cached(identity: str, texts: Sequence[str], cache_dir: Path | None) -> bool:
    """Whether the cache holds the embedding by the model `identity` of every text (an index built then embeds
    nothing)."""
    if not texts:
        return True
    if cache_dir is None:
        return False
    try:
        with ARRAY_READS, np.load(cache_path(cache_dir, identity, TOOL_TOKENS), allow_pickle=False) as data:
            read = _read_keys(data["keys"])
    except (OSError, ValueError, KeyError):
        return False
    if read is None:
        return False
    keys = set(read)
    return all(text_key(text) in keys for text in texts)


def _merge(path: Path, new: dict[bytes, np.ndarray], dim: int) -> None:
    """Add `new` to the cache file, keeping the rows another builder wrote since (the only work under the lock)."""
    with _locked(path):
        rows = cache_fetch(path, dim)
        rows.update(new)
        cache_store(path, rows)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path`.lock while the body runs (one merge of finished rows at a time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@dataclass(frozen=True)
class DenseBuild:
    """How a dense index was built."""

    tools: int
    embedded: int
    """Tools embedded now (the rest came from the cache)."""
    seconds: float


class DenseIndex:
    """Unit embeddings of a fixed list of texts; `scores(query)` is the cosine similarity of each to the query."""

    def __init__(self, encoder: SentenceEncoder, texts: Sequence[str], cache_dir: Path | None,
                 progress: Callable[[int, int], None] | None = None) -> None:
        """Embed `texts` (cut to `TOOL_TOKENS`), reading and extending the cache in `cache_dir` (None: no cache).

        The texts the cache lacks are embedded `CHUNK_TOOLS` at a time, and the cache is written after each chunk,
        so an interrupted build keeps what it did; `progress(embedded, to_embed)` is told before each chunk."""
        started = time.perf_counter()
        self._encoder = encoder
        keys = [text_key(text) for text in texts]
        report = progress or (lambda embedded, to_embed: None)
        if cache_dir is None:
            report(0, len(texts))
            self.vectors = encoder.encode(texts, max_tokens=TOOL_TOKENS)
            embedded = len(texts)
        else:
            path = cache_path(cache_dir, encoder.identity, TOOL_TOKENS)
            rows = cache_fetch(path, encoder.dim)
            missing = sorted({i for i, key in enumerate(keys) if key not in rows})
            chunks = [missing[start:start + CHUNK_TOOLS] for start in range(0, len(missing), CHUNK_TOOLS)]
            turn = os.getpid() % len(chunks) if chunks else 0  # concurrent builders start apart
            embedded = 0
            for done, chunk in enumerate(chunks[turn:] + chunks[:turn]):
                report(done * CHUNK_TOOLS, len(missing))
                if done:  # another builder may have written this chunk meanwhile
                    rows.update(cache_fetch(path, encoder.dim))
                    chunk = [i for i in chunk if keys[i] not in rows]
                if not chunk:
                    continue
                fresh = encoder.encode([texts[i] for i in chunk], max_tokens=TOOL_TOKENS)
                new = {keys[i]: fresh[j] for j, i in enumerate(chunk)}
                rows.update(new)
                embedded += len(chunk)
                _merge(path, new, encoder.dim)
            self.vectors = np.stack([rows[key] for key in keys]) if keys else np.zeros((0, encoder.dim), np.float32)
        self.build = DenseBuild(tools=len(texts), embedded=embedded,
                                seconds=round(time.perf_counter() - started, 3))
        log.info("tool search: dense index of %d tools (%d embedded now) in %.1f s", len(texts), embedded,
                 self.build.seconds)

    @classmethod
    def from_vectors(cls, encoder: SentenceEncoder, vectors: np.ndarray) -> DenseIndex:
        """An index over embeddings made before (a prebuilt index's mapped matrix: nothing is embedded or copied)."""
        index = cls.__new__(cls)
        index._encoder = encoder
        index.vectors = vectors
        index.build = DenseBuild(tools=len(vectors), embedded=0, seconds=0.0)
        return index

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every text to `query` (both unit vectors), in text order."""
        vector = self._encoder.encode([query], max_tokens=QUERY_TOKENS)[0]
        return np.asarray(self.vectors @ vector, dtype=np.float64)
