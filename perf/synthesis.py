#!/usr/bin/env python3
"""CPU time of the rules engine's response generation, per generated response (`utils.schema.instance`).

For every operation with a response schema in the toolkit directories given (default: the shipped examples, the
`notes` test toolkit and the tau2 toolkits; pass the open-world pool's `toolkits/` directory to cover 1,046 real
descriptions), responses are generated for `--seeds` seeds, with the operation's argument names as echo hints:
- `warm`: with one cache for every call, as the server keeps one, the second time the same calls are made (the
  first compiles the checks they need: 50-300 ms for a sub-schema of Stripe's or GitHub's);
- `cold`: with a new cache per call, as the LLM stub and a first call meet a schema.
Each is reported in µs per generated response (CPU time, `time.process_time`), with how many schemas no response
could be made for. The loaded toolkits are frozen out of the garbage collector first, as the server freezes them:
otherwise a full collection over the pool's objects (0.5 s) lands on whichever response is being made. `notes_create_us` / `notes_read_us` are the two calls of `perf/rule_path.py`'s (b) and (c).
Prints one JSON object with the load average before and after.

Run: `python perf/synthesis.py [--toolkits DIR ...] [--seeds 8]`. To time another worktree, run it with
`PYTHONPATH=<that worktree>`.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gecko.toolkits import load_toolkits
from gecko.toolkits.model import Operation
from utils.paths import EXAMPLE_TOOLKITS_DIR
from utils.schema.instance import SchemaCache, UnsatisfiableSchema, generate_instance

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIRS = [EXAMPLE_TOOLKITS_DIR, ROOT / "tests" / "data" / "openapi", ROOT / "benchmarks" / "taubench" / "toolkits"]


def _operations(directories: list[Path]) -> list[Operation]:
    found: list[Operation] = []
    for directory in directories:
        registry = load_toolkits([directory])
        for name in sorted(registry.toolkits):
            toolkit = registry.toolkit(name)
            if toolkit is not None:
                found += [op for op in toolkit.operations.values() if isinstance(op.response_schema, dict)]
    return found


def _timed(operations: list[Operation], seeds: int, cache: Callable[[], SchemaCache]) -> dict[str, Any]:
    made = failed = 0
    started = time.process_time()
    for op in operations:
        echo = {name: name for name in op.args_schema.get("properties", {})}
        for seed in range(seeds):
            try:
                generate_instance(op.response_schema, f"{op.tool_name}#{seed}", echo, check=op.response_is_valid,
                                  cache=cache())
                made += 1
            except UnsatisfiableSchema:
                failed += 1
    spent = time.process_time() - started
    return {"us_per_response": round(spent * 1e6 / max(made + failed, 1), 1), "made": made, "unsatisfiable": failed}


def _per_call(op: Operation, arguments: dict[str, Any], calls: int = 5000) -> float:
    cache = SchemaCache()
    for n in range(200):
        generate_instance(op.response_schema, f"warm{n}", arguments, check=op.response_is_valid, cache=cache)
    started = time.process_time()
    for n in range(calls):
        generate_instance(op.response_schema, f"s{n}", arguments, check=op.response_is_valid, cache=cache)
    return round((time.process_time() - started) * 1e6 / calls, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--toolkits", nargs="*", type=Path, default=DEFAULT_DIRS)
    parser.add_argument("--seeds", type=int, default=8)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # real descriptions warn about dropped examples while they load
    load_before = os.getloadavg()[0]
    operations = _operations(args.toolkits)
    gc.freeze()  # the loaded toolkits out of the collector's way, as the server does (`gecko.workers`)
    shared = SchemaCache()
    _timed(operations, args.seeds, lambda: shared)  # the same calls once before: every check they need compiled
    notes = load_toolkits([ROOT / "tests" / "data" / "openapi"])
    result = {
        "operations": len(operations),
        "warm": _timed(operations, args.seeds, lambda: shared),
        "cold": _timed(operations, max(1, args.seeds // 4), SchemaCache),
        "notes_create_us": _per_call(notes.get("notes", "create_note"),
                                     {"title": "note", "body": "text", "tags": ["work"]}),
        "notes_read_us": _per_call(notes.get("notes", "get_note"), {"note_id": "N-123"}),
        "toolkits": [str(d) for d in args.toolkits],
        "load_before": load_before, "load_after": os.getloadavg()[0],
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
