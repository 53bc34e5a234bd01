"""A prebuilt search index of a schemas directory, read by mapping files instead of loading every document.

A directory of many toolkits (the open-world pool: a thousand documents, ten thousand tools) can carry, in
`<schemas dir>/.gecko-index/`, everything a server needs before a tool is called:

- `catalogue.json`: each document's file name, size and modification time (the index is used only while every
  document of the directory is exactly the one it was built from), its toolkit's name, title and aliases, and each
  tool's public fields (`ToolEntry`: what a search hit shows);
- `bm25/`: the BM25 index as `bm25s` saves it, loaded with `mmap=True`: its arrays are mapped read-only, so every
  worker of a server shares one copy through the page cache;
- `dense-<model identity>-t<cut>.npy`: the tools' unit embeddings (float32, one row per tool in catalogue order),
  mapped the same way (`numpy.load(mmap_mode="r")`), and `dense-texts.json`, what was embedded (a server whose
  model differs embeds those texts itself, as it would without an index).

`write_index` makes it (`gecko pool build` calls it); `open_index` reads it back, or says why it cannot be used.
A server on such a directory loads each document on first use (`gecko.toolkits.lazy`); rankings are identical to
an index built in memory from the loaded documents (same texts, same tokens, same order).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gecko.toolkits.model import Operation, Toolkit

log = logging.getLogger("gecko.search")

INDEX_DIR = ".gecko-index"
"""The index's directory inside a schemas directory (hidden: the loader reads only files with a document suffix)."""
FORMAT = 1
CATALOGUE = "catalogue.json"
BM25_DIR = "bm25"
DENSE_TEXTS = "dense-texts.json"
SUMMARY_CHARS = 200


@dataclass(frozen=True)
class ToolEntry:
    """What a search knows of one tool without its toolkit being loaded: the fields of a hit."""

    toolkit: str
    operation_id: str
    call_name: str
    original_name: str
    access: str
    summary: str
    app: str
    source: str

    @classmethod
    def of(cls, toolkit: Toolkit, op: Operation) -> ToolEntry:
        """The entry of a loaded tool."""
        return cls(toolkit=toolkit.name, operation_id=op.operation_id, call_name=op.call_name,
                   original_name=op.original_name, access=op.access,
                   summary=op.summary or first_line(op.description), app=toolkit.labels.get("app", toolkit.name),
                   source=toolkit.labels.get("source", ""))


def first_line(text: str) -> str:
    """`text` on one line, at most SUMMARY_CHARS characters."""
    line = " ".join(text.split())
    return line if len(line) <= SUMMARY_CHARS else line[:SUMMARY_CHARS - 1] + "…"


@dataclass(frozen=True)
class ToolkitEntry:
    """One document of the directory and the toolkit it loads as."""

    file: str
    """The document's file name in the schemas directory."""
    size: int
    mtime_ns: int
    name: str
    title: str
    aliases: tuple[str, ...]
    tools: tuple[ToolEntry, ...]
    routes: tuple[tuple[str, str], ...]
    """Each tool's method and document path (a call by path loads only a toolkit that has the path)."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolkitEntry:
        return cls(file=data["file"], size=int(data["size"]), mtime_ns=int(data["mtime_ns"]), name=data["name"],
                   title=data["title"], aliases=tuple(data["aliases"]),
                   tools=tuple(ToolEntry(**tool) for tool in data["tools"]),
                   routes=tuple((str(method), str(path)) for method, path in data["routes"]))


@dataclass(frozen=True)
class Described:
    """A loaded toolkit as the index needs it (picklable: `gecko pool build` describes toolkits in worker
    processes): its entry (file size and time are filled in when the index is written) and each tool's texts."""

    file: str
    name: str
    title: str
    aliases: tuple[str, ...]
    tools: tuple[ToolEntry, ...]
    routes: tuple[tuple[str, str], ...]
    bm25_texts: tuple[str, ...]
    dense_texts: tuple[str, ...]


def describe(path: Path, toolkit: Toolkit) -> Described:
    """What the index keeps of the toolkit loaded from `path`."""
    from gecko.toolkits.search import dense_text, tool_text

    ops = list(toolkit.operations.values())
    return Described(file=path.name, name=toolkit.name, title=toolkit.title, aliases=tuple(toolkit.aliases),
                     tools=tuple(ToolEntry.of(toolkit, op) for op in ops),
                     routes=tuple((op.method, op.path) for op in ops),
                     bm25_texts=tuple(tool_text(toolkit, op) for op in ops),
                     dense_texts=tuple(dense_text(toolkit, op) for op in ops))


@dataclass(frozen=True)
class IndexSummary:
    """What `write_index` wrote."""

    tools: int
    toolkits: int
    dense: str | None
    """The embedding model's identity when embeddings were written; None: dense was not built (`reason` says why)."""
    reason: str | None = None
    embedded: int = 0
    """Tools embedded by the encoder now (the rest came from the embedding cache)."""


def write_index(schemas_dir: Path, described: Sequence[Described], *, dense: bool = True,
                cache_dir: Path | None = None) -> IndexSummary:
    """Write `<schemas_dir>/.gecko-index` for the documents `described` (in the directory's load order: file name).

    Args:
        schemas_dir: the directory holding the documents (each file must exist: its size and time are recorded).
        described: every document of the directory, as `describe` made it.
        dense: embed the tools too, when the embedding model is installed.
        cache_dir: the embedding cache to read and extend (`search_dense`; None: embed everything).

    Raises:
        SearchUnavailable: the search extra (bm25s) is not installed.
        OSError: the index cannot be written.
    """
    from gecko.toolkits.search import Tokenizer, _dense_missing, _load_backend

    bm25s, stemmer, stopwords = _load_backend()
    target = schemas_dir / INDEX_DIR
    staging = schemas_dir / f"{INDEX_DIR}.writing"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    ordered = sorted(described, key=lambda d: d.file)  # the loader's order: documents by file name
    entries = []
    for item in ordered:
        stat = (schemas_dir / item.file).stat()
        entries.append(ToolkitEntry(file=item.file, size=stat.st_size, mtime_ns=stat.st_mtime_ns, name=item.name,
                                    title=item.title, aliases=item.aliases, tools=item.tools,
                                    routes=item.routes))
    tokenize = Tokenizer(stemmer, stopwords)
    corpus = [tokenize(text) or [""] for item in ordered for text in item.bm25_texts]
    model = bm25s.BM25()
    if corpus:
        model.index(corpus, show_progress=False)
        model.save(str(staging / BM25_DIR), show_progress=False)
    texts = [text for item in ordered for text in item.dense_texts]
    (staging / DENSE_TEXTS).write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    identity, reason, embedded = None, _dense_missing(True) if dense else "left out (--no-dense)", 0
    if reason is None and texts:
        identity, embedded = _write_embeddings(staging, texts, cache_dir)
    catalogue = {"format": FORMAT, "tools": len(texts), "bm25": BM25_DIR if corpus else None,
                 "dense": {"identity": identity, "file": _dense_file(identity)} if identity else None,
                 "toolkits": [asdict(entry) for entry in entries]}
    (staging / CATALOGUE).write_text(json.dumps(catalogue, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)
    return IndexSummary(tools=len(texts), toolkits=len(entries), dense=identity, reason=reason, embedded=embedded)


def index_directory(schemas_dir: Path, *, dense: bool = True, cache_dir: Path | None = None) -> IndexSummary:
    """Load every document of `schemas_dir` (invalid ones raise) and write its index (`write_index`).

    Raises:
        ToolkitLoadError: a document cannot be loaded.
        SearchUnavailable: the search extra (bm25s) is not installed.
        OSError: the index cannot be written.
    """
    from gecko.toolkits.loader import load_toolkits

    registry = load_toolkits([schemas_dir], warn=False)
    return write_index(schemas_dir, [describe(Path(tk.source), tk) for tk in registry.toolkits.values()],
                       dense=dense, cache_dir=cache_dir)


def _dense_file(identity: str) -> str:
    from gecko.toolkits.search_dense import TOOL_TOKENS

    return f"dense-{identity}-t{TOOL_TOKENS}.npy"


def _write_embeddings(staging: Path, texts: list[str], cache_dir: Path | None) -> tuple[str, int]:
    import numpy as np

    from gecko.toolkits.search_dense import DenseIndex
    from gecko.toolkits.search_encoder import SentenceEncoder

    encoder = SentenceEncoder.packaged()
    built = DenseIndex(encoder, texts, cache_dir)
    np.save(staging / _dense_file(encoder.identity), np.ascontiguousarray(built.vectors, dtype=np.float32))
    return encoder.identity, built.build.embedded


@dataclass(frozen=True)
class StoredIndex:
    """A prebuilt index that matches its directory's documents (see `open_index`)."""

    directory: Path
    """The index directory (`<schemas dir>/.gecko-index`)."""
    schemas_dir: Path
    toolkits: tuple[ToolkitEntry, ...]
    bm25_dir: Path | None
    dense_identity: str | None
    dense_path: Path | None

    @property
    def tools(self) -> list[ToolEntry]:
        """Every tool, in registry order (toolkits by file name, then document order)."""
        return [tool for toolkit in self.toolkits for tool in toolkit.tools]

    def load_bm25(self) -> Any:
        """The BM25 model with its arrays mapped from the files (None when there are no tools)."""
        if self.bm25_dir is None:
            return None
        import bm25s

        from gecko.toolkits.search_dense import ARRAY_READS

        with ARRAY_READS:  # its arrays are numpy files too
            return bm25s.BM25.load(str(self.bm25_dir), mmap=True, show_progress=False)

    def dense_vectors(self, identity: str) -> Any:
        """The mapped embedding matrix by the model `identity`, or None when the index holds none by it."""
        if self.dense_path is None or identity != self.dense_identity:
            return None
        import numpy as np

        from gecko.toolkits.search_dense import ARRAY_READS

        with ARRAY_READS:
            return np.load(self.dense_path, mmap_mode="r", allow_pickle=False)

    def dense_texts(self) -> list[str]:
        """What each tool's embedding is of (to embed them with another model)."""
        texts: list[str] = json.loads((self.directory / DENSE_TEXTS).read_text(encoding="utf-8"))
        return texts


def open_index(schemas_dir: Path, documents: Sequence[Path]) -> tuple[StoredIndex | None, str | None]:
    """The prebuilt index of `schemas_dir` when it describes exactly `documents` (the directory's document files:
    same names, sizes and modification times), else (None, why not; None when there is no index at all)."""
    directory = schemas_dir / INDEX_DIR
    try:
        data = json.loads((directory / CATALOGUE).read_bytes())
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        return None, f"its catalogue is unreadable ({exc})"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None, "it was written by another version of Gecko"
    try:
        entries = tuple(ToolkitEntry.from_json(t) for t in data["toolkits"])
    except (KeyError, TypeError, ValueError) as exc:
        return None, f"its catalogue is malformed ({exc!r})"
    by_name = {entry.file: entry for entry in entries}
    if sorted(by_name) != sorted(p.name for p in documents) or len(by_name) != len(entries):
        return None, "the directory's documents are not the ones it was built from"
    for path in documents:
        stat, entry = path.stat(), by_name[path.name]
        if (stat.st_size, stat.st_mtime_ns) != (entry.size, entry.mtime_ns):
            return None, f"{path.name} changed since it was built"
    dense = data.get("dense") or None
    return StoredIndex(directory=directory, schemas_dir=schemas_dir, toolkits=entries,
                       bm25_dir=directory / data["bm25"] if data.get("bm25") else None,
                       dense_identity=dense["identity"] if dense else None,
                       dense_path=directory / dense["file"] if dense else None), None
