#!/usr/bin/env python3
"""Gecko against real REST servers: seeded call sequences replayed on the real server and on Gecko, per class.

Backends (npm, pinned in `.npm-tools/` by `make npm-tools`): json-server 0.17.4 (does not validate bodies: invalid
calls go to Gecko only) and temba 0.51.1 (validates with the document's schemas), each described by an OpenAPI
3.1 document written as a user would (`perf/data/rest_fidelity/<backend>/blog.json`: posts, comments, notes).
Gecko runs with the rules engines and 2 workers; each sequence gets a fresh session seeded with the records the
real server was seeded with. Loopback only; every request has a timeout; the run ends after its sequences.
Prints one JSON object (`{"backends": {name: figures}}`; see `benchmarks/fidelity/rest_replay/measures.py`).

Run: `python perf/rest_fidelity.py [--sequences 200] [--calls 20] [--seed 0] [--backends json-server,temba]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.fidelity.rest_replay import BACKENDS, BackendUnavailable, ReplayConfig, run

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ROOT / "perf" / "data" / "rest_fidelity"
NPM_DIR = ROOT / ".npm-tools"
TARGETS = {"creates_only_sent": 0.99, "put_replaces": 0.99, "status_exact": 0.99, "invented_fields": 0,
           "page_size_honoured": 0.95}
"""Issue 32's targets."""


def document(backend: str) -> Path:
    """The OpenAPI document of a backend."""
    return DOCUMENTS / backend.replace("-", "_") / "blog.json"


def _tell(backend: str, done: int) -> None:
    if done % 20 == 0:
        print(f"{backend}: {done} sequences", file=sys.stderr, flush=True)


def measure(backends: list[str], sequences: int, calls: int, seed: int, gecko_url: str | None = None) -> dict[str, Any]:
    """Every backend's figures (a backend that is not installed is reported as skipped)."""
    out: dict[str, Any] = {}
    for name in backends:
        try:
            out[name] = run(ReplayConfig(name, document(name), NPM_DIR, sequences=sequences, calls=calls,
                                         seed=seed, gecko_url=gecko_url), progress=partial(_tell, name))
        except BackendUnavailable as exc:
            out[name] = {"skipped": str(exc)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20, help="calls per sequence")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated")
    args = parser.parse_args()
    started = time.perf_counter()
    figures = measure([b for b in args.backends.split(",") if b], args.sequences, args.calls, args.seed)
    print(json.dumps({"targets": TARGETS, "backends": figures,
                      "wall_seconds": round(time.perf_counter() - started, 1)}))


if __name__ == "__main__":
    main()
