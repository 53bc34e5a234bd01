"""Serve a schemas directory from its prebuilt index: register its toolkits from the catalogue, load each on first use.

`load_toolkits` asks `load_prebuilt` first: a single schemas directory whose `.gecko-index` matches its documents
(`gecko.toolkits.search_store.open_index`) becomes a registry of lazily loaded toolkits (`gecko.toolkits.lazy`) that
carries the index (`ToolkitRegistry.stored`) for tool search. Nothing is parsed, validated or compiled at start-up;
`load_document_lazily` does it for one document when its toolkit is first used, with the checks and the messages of
a load at start-up (`--strict`, `--strict-validation`, `--max-toolkit-nodes` and the validation cache included).
Several directories, or an index that no longer matches (a document changed, added or removed), load as before.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

from gecko.toolkits.guards import DocumentRefused, check_document
from gecko.toolkits.lazy import LazyToolkit
from gecko.toolkits.lenient import repair_document
from gecko.toolkits.loader import (
    ToolkitLoadError,
    _cache,
    build_toolkit,
    list_documents,
    parse_document,
    spec_errors,
)
from gecko.toolkits.model import Toolkit
from gecko.toolkits.registry import ToolkitRegistry
from gecko.toolkits.schemas import InvalidSchemaError
from gecko.toolkits.search_store import open_index
from utils.schema.refs import SchemaRefError

log = logging.getLogger("gecko.toolkits")


def load_prebuilt(dirs: list[Path], *, skip_invalid: bool, cache_dir: Path | None, validate: bool,
                  strict_validation: bool, strict: bool, max_nodes: int) -> ToolkitRegistry | None:
    """The registry of a single schemas directory with a current prebuilt index, its toolkits loaded on first use;
    None when `dirs` is not one such directory (the caller loads them as usual).

    Raises:
        ToolkitLoadError: the directory does not exist.
    """
    if len(dirs) != 1:
        return None
    directory = Path(dirs[0])
    documents = list_documents(directory)
    stored, why = open_index(directory, documents)
    if stored is None:
        if why is not None:
            log.warning("%s: its prebuilt index is not used, %s; every document is loaded now (rebuild the index: "
                        "gecko pool build)", directory, why)
        return None
    registry = ToolkitRegistry()
    load = partial(load_document_lazily, cache_dir=cache_dir, validate=validate, strict_validation=strict_validation,
                   strict=strict, max_nodes=max_nodes)
    for entry in stored.toolkits:
        stub = LazyToolkit(entry.name, entry.aliases, len(entry.tools), partial(load, directory / entry.file),
                           skip_invalid=skip_invalid)
        registry.add_lazy(stub, routes=list(entry.routes))
    if list(registry.toolkits) == [entry.name for entry in stored.toolkits]:
        registry.stored = stored
    return registry


def load_document_lazily(path: Path, *, cache_dir: Path | None, validate: bool, strict_validation: bool,
                         strict: bool, max_nodes: int) -> Toolkit:
    """Load one document as `load_toolkits` would (guards, repairs, validation unless the cache knows it, compile),
    logging the faults it repairs at info level (`gecko pool build` reported them as warnings).

    Raises:
        ToolkitLoadError: the document cannot be used; the message is the one the start-up check would give.
    """
    data = path.read_bytes()
    doc = parse_document(path, data)
    try:
        check_document(path.stem, doc, max_nodes)
    except DocumentRefused as exc:
        raise ToolkitLoadError(f"{path}: {exc}") from None
    cache = _cache(cache_dir, strict_validation, strict, max_nodes)
    key = cache.key(data)
    known = cache.known(key)
    faults = [] if strict or (known is not None and not known.faults) else repair_document(doc)
    if validate and known is None:
        problem = spec_errors(doc, strict=strict_validation)
        if problem:
            raise ToolkitLoadError(f"{path}: invalid OpenAPI document: {problem}")
    try:
        toolkit = build_toolkit(path, doc, None if strict else faults)
    except (ToolkitLoadError, SchemaRefError, InvalidSchemaError, ValueError) as exc:
        raise ToolkitLoadError(f"{path}: {exc}") from None
    if validate and known is None:
        cache.remember(key, len(toolkit.operations), [str(f) for f in faults])
    for fault in faults:
        log.info("%s: %s", path, fault)
    return toolkit
