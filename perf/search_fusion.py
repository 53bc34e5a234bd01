#!/usr/bin/env python3
"""Tool search rankings compared in one process, on the BFCL single-turn subset of the open-world pool.

The index holds the pool's BFCL single-turn toolkits only (every distinct function of the seven categories, built
the way `gecko pool build` builds them), not the whole pool: embedding ~10,000 tools takes minutes on two cores, the
subset a fraction of that (and the tool embeddings are cached in `--cache-dir`). For every task the user's request is
the query and its own functions the relevant tools, as in `perf/pool.py`. BM25 and dense scores are computed once per
query, then each ranking is scored from them: `bm25`, `dense`, and hybrid (reciprocal rank fusion) at several RRF
constants and fusion depths, plus BM25 over documents whose fields are weighted (the tool's name repeated).

Prints one JSON object: recall@5/10/20 per ranking, the mean time of a BM25 query, of a query embedding (the cost
dense adds to every hybrid search) and the load average.

Run: `python perf/search_fusion.py [--limit N] [--stride N] [--cache-dir DIR]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from pool import CATEGORIES, KS, _tasks  # perf/pool.py, beside this script

from benchmarks.openworld.pool.collect import bfcl_single_turn, function_fingerprint
from benchmarks.openworld.pool.spec import BfclSource
from gecko.toolkits import search
from gecko.toolkits.loader import load_toolkits
from gecko.toolkits.search import ToolIndex, fuse_rrf

RRF_CONSTANTS = (1, 5, 10, 20, 60)
DEPTHS = (10, 20, 50, 100)


def _registry(directory: Path) -> tuple[Any, dict[str, tuple[str, str]]]:
    sources = json.loads((Path(__file__).parents[1] / "benchmarks/openworld/pool/sources.json").read_text())
    spec = BfclSource(**{**sources["bfcl"], "single_turn_categories": CATEGORIES})
    by_fingerprint: dict[str, tuple[str, str]] = {}
    for toolkit in bfcl_single_turn(spec):
        (directory / f"{toolkit.name}.json").write_text(json.dumps(toolkit.doc))
        for name, fingerprint in toolkit.fingerprints.items():
            by_fingerprint[fingerprint] = (toolkit.name, name)
    return load_toolkits([directory], skip_invalid=True, validate=False, warn=False), by_fingerprint


def _recall(rankings: list[list[int]], wanted: list[set[int]]) -> dict[str, float]:
    out = {}
    for k in KS:
        out[f"recall@{k}"] = round(100 * statistics.fmean(
            len(w & set(r[:k])) / len(w) for r, w in zip(rankings, wanted, strict=True)), 2)
    return out


def _fused(bm25: list[int], dense: list[int], constant: int) -> list[int]:
    fused = fuse_rrf([bm25, dense], constant)
    return sorted(fused, key=lambda i: (-fused[i], i))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--stride", type=int, default=1, help="every Nth task (a sample across the categories)")
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache/gecko/search")
    args = parser.parse_args()
    result: dict[str, Any] = {"load_average": os.getloadavg(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="gecko-fusion-") as tmp:
        registry, by_fingerprint = _registry(Path(tmp))
    index = ToolIndex(registry, dense=True, cache_dir=args.cache_dir)
    started = time.perf_counter()
    index.warm_dense()
    result["dense_build_seconds"] = round(time.perf_counter() - started, 1)
    position = {(tool.toolkit, tool.original_name): i for i, tool in enumerate(index._tools)}
    tasks: list[str] = []
    wanted: list[set[int]] = []
    for _, query, functions in _tasks(args.limit)[::args.stride]:
        keys = (by_fingerprint.get(function_fingerprint(f)) for f in functions)
        ids = {position[key] for key in keys if key is not None and key in position}
        if ids:
            tasks.append(query[:search.MAX_QUERY_CHARS])
            wanted.append(ids)
    result["tools"], result["tasks"] = index.size, len(tasks)
    index.search("warm up", 1, mode="hybrid")
    bm25_ms, dense_ms, bm25_rank, dense_rank = [], [], [], []
    for query in tasks:
        t0 = time.perf_counter()
        scores = index._bm25_scores(query)
        t1 = time.perf_counter()
        dense = index._dense.scores(query)
        t2 = time.perf_counter()
        bm25_ms.append((t1 - t0) * 1000)
        dense_ms.append((t2 - t1) * 1000)
        bm25_rank.append(search._ranked(scores, np.flatnonzero(scores > 0))[:100])
        dense_rank.append(search._ranked(dense, np.arange(len(dense)))[:100])
    result["ms_per_query"] = {"bm25_scores": round(statistics.fmean(bm25_ms), 2),
                              "query_embedding_and_dense_scores": round(statistics.fmean(dense_ms), 2)}
    rankings: dict[str, Any] = {"bm25": _recall(bm25_rank, wanted), "dense": _recall(dense_rank, wanted)}
    for constant in RRF_CONSTANTS:
        for depth in DEPTHS:
            fused_rank = [_fused(b[:depth], d[:depth], constant) for b, d in zip(bm25_rank, dense_rank, strict=True)]
            rankings[f"hybrid rrf_k={constant} depth={depth}"] = _recall(fused_rank, wanted)
    # field weighting: the tool's name (split into words) counted `w` times in its BM25 document
    original = search.tool_text
    for weight in (2, 3):
        def weighted(toolkit: Any, op: Any, w: int = weight) -> str:
            name = " ".join(search._WORDS.findall(op.original_name))
            return "\n".join([original(toolkit, op), *[name] * (w - 1)])

        search.tool_text = weighted
        try:
            variant = ToolIndex(registry, dense=False)
            variant._warm_bm25()
            ranks = []
            for query in tasks:
                scores = variant._bm25_scores(query)
                ranks.append(search._ranked(scores, np.flatnonzero(scores > 0))[:100])
        finally:
            search.tool_text = original
        rankings[f"bm25 name x{weight}"] = _recall(ranks, wanted)
    result["rankings"] = rankings
    result["load_average_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
