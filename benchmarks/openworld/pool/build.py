"""Assemble the pool: collect every source, drop duplicate tools, check each toolkit with Gecko's own loader,
write `<out>/toolkits/<name>.json`, the search index a server maps instead of loading every document
(`<out>/toolkits/.gecko-index/`: `gecko.toolkits.search_store`) and `<out>/manifest.json` (sources, counts, every
tool with its tags).

Output is deterministic for the same pinned inputs. A build writes beside the old pool and swaps it in at the
end, so a failed build leaves the previous pool as it was.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.openworld.pool.collect import (
    PoolToolkit,
    SourceError,
    bfcl_multi_turn,
    bfcl_single_turn,
    mcp_servers,
    openapi_package,
    tau2,
)
from benchmarks.openworld.pool.npm import NpmError
from benchmarks.openworld.pool.spec import SOURCE_KINDS, PoolSources
from gecko.toolkits.loader import POOL_LABELS_KEY
from gecko.toolkits.search_store import Described, describe, write_index

log = logging.getLogger(__name__)

MANIFEST_VERSION = 1
SUMMARY_MAX = 160
PROBLEM_MAX = 300
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class PoolBuildError(RuntimeError):
    """A source that cannot be read or a pool that cannot be written; the message is meant for the user."""


def short_description(text: str, fallback: str) -> str:
    """The first sentence of `text` (markdown links and whitespace flattened), at most SUMMARY_MAX characters."""
    flat = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text or "")
    flat = re.sub(r"[`*_#>]+", "", flat)
    flat = " ".join(flat.split())
    if not flat:
        flat = " ".join(re.split(r"[_.\-\s]+|(?<=[a-z])(?=[A-Z])", fallback)).strip()
    sentence = re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]
    return sentence if len(sentence) <= SUMMARY_MAX else sentence[: SUMMARY_MAX - 1].rstrip() + "…"


def _operations(doc: dict[str, Any]) -> Iterable[tuple[str, str, dict[str, Any]]]:
    for route, item in list((doc.get("paths") or {}).items()):
        if isinstance(item, dict):
            for method in HTTP_METHODS:
                if isinstance(item.get(method), dict):
                    yield route, method, item[method]


def _tool_key(method: str, route: str, op: dict[str, Any]) -> str:
    """Identity of one tool across the pool: its name and its arguments (parameters and request body)."""
    name = op.get("x-gecko-original-name") or op.get("operationId") or f"{method} {route}"
    canonical = json.dumps({"name": name, "parameters": op.get("parameters"), "body": op.get("requestBody")},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def drop_duplicates(toolkits: list[PoolToolkit]) -> int:
    """Remove every operation already defined (same name, same arguments) by an earlier toolkit; returns how many."""
    seen: set[str] = set()
    dropped = 0
    for toolkit in toolkits:
        paths = toolkit.doc.get("paths") or {}
        for route, method, op in list(_operations(toolkit.doc)):
            key = _tool_key(method, route, op)
            if key in seen:
                del paths[route][method]
                dropped += 1
            seen.add(key)
        for route in [r for r, item in paths.items() if isinstance(item, dict)
                      and not any(m in item for m in HTTP_METHODS)]:
            del paths[route]
    return dropped


def collect(sources: PoolSources, *, data_dir: Path, cache: Path, only: set[str]) -> tuple[list[PoolToolkit], dict[str, str]]:
    """Every source's toolkits in a fixed order (earlier sources win duplicates), and the sha256 of each tarball."""
    toolkits: list[PoolToolkit] = []
    hashes: dict[str, str] = {}
    steps: list[tuple[str, Any]] = []
    if sources.bfcl is not None:
        bfcl = sources.bfcl
        steps += [("bfcl-single-turn", lambda: bfcl_single_turn(bfcl)),
                  ("bfcl-multi-turn", lambda: bfcl_multi_turn(bfcl, data_dir))]
    if sources.tau2 is not None:
        spec = sources.tau2
        steps.append(("tau2", lambda: tau2(spec)))
    for package in sources.openapi:
        def read(package: Any = package) -> list[PoolToolkit]:
            found, tarballs = openapi_package(package, cache)
            hashes.update(tarballs)
            return found
        steps.append(("openapi", read))
    if sources.mcp.servers:
        steps.append(("mcp", lambda: mcp_servers(sources.mcp, cache)))
    for kind, run in steps:
        if kind not in only:
            continue
        started = time.perf_counter()
        try:
            found = run()
        except (SourceError, NpmError) as exc:
            raise PoolBuildError(f"pool source {kind!r} is unavailable: {exc}") from None
        log.info("%s: %d toolkits in %.1fs", kind, len(found), time.perf_counter() - started)
        toolkits += found
    names = Counter(t.name for t in toolkits)
    clashes = sorted(n for n, c in names.items() if c > 1)
    if clashes:
        raise PoolBuildError(f"two pool toolkits share a name: {', '.join(clashes)} (rename an app in the sources file)")
    return toolkits, hashes


Checked = tuple[str | None, list[dict[str, Any]], Described | None]
"""(problem or None, the tools as the manifest lists them, what the search index keeps of the toolkit)."""


def check_toolkit(path: Path) -> Checked:
    """Load one written toolkit as the server will: (problem or None, its tools as the manifest lists them, what the
    search index keeps of it)."""
    from gecko.toolkits.loader import ToolkitLoadError, load_document

    try:
        toolkit, _ = load_document(path, path.read_bytes())  # leniently, as the server loads it by default
    except (ToolkitLoadError, RecursionError) as exc:
        return f"{' '.join(str(exc).split())[:PROBLEM_MAX]}", [], None
    tools = [{"toolkit": toolkit.name, "operation_id": op.operation_id, "name": op.original_name,
              "access": op.access, "summary": short_description(op.summary or op.description, op.original_name)}
             for op in toolkit.operations.values()]
    return None, tools, describe(path, toolkit)


def _check_all(paths: list[Path]) -> list[Checked]:
    workers = max(1, min(os.cpu_count() or 1, 4))
    if workers == 1 or len(paths) < 8:
        return [check_toolkit(p) for p in paths]
    with ProcessPoolExecutor(max_workers=workers) as executor:
        return list(executor.map(check_toolkit, paths, chunksize=4))


def _pins(sources: PoolSources, hashes: dict[str, str], only: set[str]) -> list[dict[str, Any]]:
    pins: list[dict[str, Any]] = []
    if sources.bfcl is not None and only & {"bfcl-single-turn", "bfcl-multi-turn"}:
        pins.append({"registry": "pypi", "package": sources.bfcl.package, "version": sources.bfcl.version})
    if sources.tau2 is not None and "tau2" in only:
        pins.append({"registry": "pypi", "package": sources.tau2.package, "version": sources.tau2.version})
    if "openapi" in only:
        pins += [{"registry": "npm", "package": p.package, "version": p.version,
                  "sha256": hashes.get(f"{p.package}@{p.version}")} for p in sources.openapi]
    if "mcp" in only:
        pins += [{"registry": "npm", "package": s.package, "version": s.version} for s in sources.mcp.servers]
    return pins


def build_pool(sources: PoolSources, out: Path, *, data_dir: Path, cache: Path,
               only: Iterable[str] = SOURCE_KINDS, dense: bool = True,
               search_cache: Path | None = None) -> dict[str, Any]:
    """Build the pool into `out` (`toolkits/` with its search index, and `manifest.json`); returns the manifest.

    Args:
        sources: the pinned sources.
        out: the pool directory (replaced when the build succeeds).
        data_dir: where `gecko toolkits` wrote the BFCL multi-turn toolkits (the tau2 ones ship in the package).
        cache: where npm tarballs and installed MCP servers are kept between builds.
        only: the source kinds to include (default: all of SOURCE_KINDS).
        dense: embed every tool into the index when the embedding model is installed (minutes on 2 cores for
            the whole pool, unless `search_cache` holds the embeddings), so a server never embeds the pool.
        search_cache: the embedding cache to read and extend (the server's `--search-cache-dir`; None: none).

    Raises:
        PoolBuildError: a selected source is unavailable (npm missing, a registry error, a server that does not
            start, a wrong package version), or the pool would be empty.
    """
    from gecko.convert import dump_document

    started = time.perf_counter()
    kinds = set(only)
    unknown = kinds - set(SOURCE_KINDS)
    if unknown:
        raise PoolBuildError(f"unknown pool source kind(s) {sorted(unknown)}; known: {', '.join(SOURCE_KINDS)}")
    toolkits, hashes = collect(sources, data_dir=data_dir, cache=cache, only=kinds)
    duplicates = drop_duplicates(toolkits)
    rejected = [{"toolkit": t.name, "tool": name, "source": t.source, "origin": t.origin, "problem": why}
                for t in toolkits for name, why in sorted(t.refused.items())]
    toolkits = [t for t in toolkits if t.doc.get("paths")]
    if not toolkits:
        raise PoolBuildError("the pool would be empty: no selected source gave a tool")

    staging = out.with_name(f".{out.name}.building")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "toolkits").mkdir(parents=True)
    paths = []
    for toolkit in toolkits:
        info = toolkit.doc.setdefault("info", {})
        info[POOL_LABELS_KEY] = {"app": toolkit.app, "source": toolkit.source, "origin": toolkit.origin}
        path = staging / "toolkits" / f"{toolkit.name}.json"
        path.write_text(dump_document(toolkit.doc), encoding="utf-8")
        paths.append(path)

    tools: list[dict[str, Any]] = []
    described: list[Described] = []
    for toolkit, path, (problem, found, kept) in zip(toolkits, paths, _check_all(paths)):
        if kept is not None:
            described.append(kept)
        if problem:
            rejected.append({"toolkit": toolkit.name, "source": toolkit.source, "origin": toolkit.origin,
                             "problem": problem})
            path.unlink()
            continue
        for tool in found:
            tool.update(app=toolkit.app, source=toolkit.source)
            fingerprint = toolkit.fingerprints.get(tool["name"])
            if fingerprint:
                tool["fingerprint"] = fingerprint
        tools += found
    index_started = time.perf_counter()
    index = write_index(staging / "toolkits", described, dense=dense, cache_dir=search_cache)
    log.info("search index: %d tools, dense %s, in %.1fs", index.tools,
             f"by {index.dense} ({index.embedded} embedded now)" if index.dense else f"not built ({index.reason})",
             time.perf_counter() - index_started)

    manifest = {
        "version": MANIFEST_VERSION,
        "sources": _pins(sources, hashes, kinds),
        "counts": _counts(tools),
        "duplicates_dropped": duplicates,
        "rejected": rejected,
        "build_seconds": round(time.perf_counter() - started, 1),
        "index": {"tools": index.tools, "dense": index.dense, "dense_missing": index.reason,
                  "embedded": index.embedded, "seconds": round(time.perf_counter() - index_started, 1)},
        "tools": tools,
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    _swap(staging, out)
    return manifest


def _counts(tools: list[dict[str, Any]]) -> dict[str, Any]:
    by_source: dict[str, dict[str, Any]] = defaultdict(lambda: {"tools": 0, "apps": set(), "toolkits": set(),
                                                                "read": 0, "write": 0})
    for tool in tools:
        entry = by_source[tool["source"]]
        entry["tools"] += 1
        entry["apps"].add(tool["app"])
        entry["toolkits"].add(tool["toolkit"])
        entry[tool["access"]] += 1
    sources = {name: {**e, "apps": len(e["apps"]), "toolkits": len(e["toolkits"])} for name, e in sorted(by_source.items())}
    return {
        "tools": len(tools),
        "apps": len({(t["source"], t["app"]) for t in tools}),
        "toolkits": len({t["toolkit"] for t in tools}),
        "read": sum(1 for t in tools if t["access"] == "read"),
        "write": sum(1 for t in tools if t["access"] == "write"),
        "by_source": sources,
    }


def _swap(staging: Path, out: Path) -> None:
    old = out.with_name(f".{out.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
