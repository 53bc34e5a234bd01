"""Tool retrieval over every loaded tool: `GET /tools/search` and the MCP tool `search_tools` ask this index.

Each tool is one document: its toolkit's title and app, its name (split at dots, underscores and camel case),
summary, description and argument names with their descriptions. Ranking is BM25 through `bm25s` (the optional
`search` extra: `pip install 'gecko-gats[search]'`), on English stems (PyStemmer) without stop words. The index is
built once per worker, on first use or by `warm()` at start-up, and is read-only afterwards.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from gecko.toolkits.model import Operation, Toolkit
from gecko.toolkits.registry import ToolkitRegistry

DESCRIPTION_CHARS = 1000
ARGUMENT_DESCRIPTION_CHARS = 200
MAX_ARGUMENTS = 40
MAX_K = 100
MAX_QUERY_CHARS = 2000
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_EXTRA_STOPWORDS = frozenset({"i", "me", "my", "we", "our", "you", "your", "can", "could", "would", "please", "want",
                              "need", "like", "also", "what", "which", "who", "how", "do", "does", "did", "from",
                              "about", "so", "some", "any", "its", "it's", "us"})

Engine = Literal["bm25"]


class SearchUnavailable(RuntimeError):
    """The search extra is not installed; the message says how to install it."""


@dataclass(frozen=True)
class ToolHit:
    """One ranked tool."""

    toolkit: Toolkit
    operation: Operation
    score: float

    def public(self) -> dict[str, Any]:
        """The hit as `GET /tools/search` and `search_tools` return it."""
        op, tk = self.operation, self.toolkit
        return {
            "toolkit": tk.name,
            "name": op.operation_id,
            "original_name": op.original_name,
            "app": tk.labels.get("app", tk.name),
            "source": tk.labels.get("source", ""),
            "access": op.access,
            "summary": op.summary or _first_line(op.description),
            "call": call_route(tk, op),
            "score": round(self.score, 4),
        }


_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")


def call_route(toolkit: Toolkit, op: Operation) -> str:
    """How to call a tool over HTTP: `POST /{toolkit}/{operationId}`, or the document's own route when the
    operationId is not one URL path segment (GitHub's `issues/create` is `POST /github/repos/{owner}/{repo}/issues`)."""
    if _SEGMENT.match(op.operation_id):
        return f"POST /{toolkit.name}/{op.operation_id}"
    return f"{op.method.upper()} /{toolkit.name}{op.path}"


def _first_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 200 else line[:199] + "…"


def _load_backend() -> tuple[Any, Any, frozenset[str]]:
    try:
        import bm25s
        from bm25s.stopwords import STOPWORDS_EN
    except ImportError:
        raise SearchUnavailable("tool search needs the 'search' extra: pip install 'gecko-gats[search]' "
                                "(bm25s and PyStemmer)") from None
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


class ToolIndex:
    """BM25 over the tools of a registry; thread-safe, built once."""

    def __init__(self, registry: ToolkitRegistry) -> None:
        self._tools = [(tk, op) for tk in registry.toolkits.values() for op in tk.operations.values()]
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenize: Tokenizer | None = None
        self._vocab: dict[str, int] = {}

    @property
    def size(self) -> int:
        """How many tools are indexed."""
        return len(self._tools)

    @property
    def engine(self) -> Engine:
        return "bm25"

    def warm(self) -> None:
        """Build the index now (a server calls this in the background at start-up).

        Raises:
            SearchUnavailable: the search extra is not installed.
        """
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            bm25s, stemmer, stopwords = _load_backend()
            tokenize = Tokenizer(stemmer, stopwords)
            corpus = [tokenize(tool_text(tk, op)) or [""] for tk, op in self._tools]
            model = bm25s.BM25()
            if corpus:
                model.index(corpus, show_progress=False)
            self._vocab = dict(model.vocab_dict) if corpus else {}
            self._tokenize = tokenize
            self._model = model

    def search(self, query: str, k: int = 10, *, toolkits: Iterable[str] | None = None,
               access: str | None = None) -> list[ToolHit]:
        """The `k` best tools for `query` (best first; ties in registry order), optionally only in `toolkits` and
        of one `access` kind. Tools that share no word with the query are not returned.

        Raises:
            SearchUnavailable: the search extra is not installed.
        """
        import numpy as np

        self.warm()
        assert self._tokenize is not None
        tokens = [t for t in self._tokenize(query) if t in self._vocab]
        if not tokens or not self._tools:
            return []
        scores = np.asarray(self._model.get_scores(tokens), dtype=np.float64)
        allowed = set(toolkits) if toolkits is not None else None
        if allowed is not None or access is not None:
            keep = np.fromiter(((allowed is None or tk.name in allowed) and (access is None or op.access == access)
                                for tk, op in self._tools), dtype=bool, count=len(self._tools))
            scores = np.where(keep, scores, 0.0)
        candidates = np.flatnonzero(scores > 0)
        order = candidates[np.lexsort((candidates, -scores[candidates]))][:k].tolist()
        return [ToolHit(self._tools[i][0], self._tools[i][1], float(scores[i])) for i in order]
