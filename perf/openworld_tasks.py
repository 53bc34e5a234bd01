#!/usr/bin/env python3
"""Task creation over the open-world pool: tasks generated per hour and the share kept after validation.

Needs a built pool (`make pool`). Starts one Gecko (2 workers, rules engines) on the pool, then runs
`make_taskset` (what `gecko openworld tasks` runs) with the template engine and with the LLM engine against the local
stub (`utils.llm_stub`, in-process, `--stub-latency-ms` per reply), each on `--count` candidates of `--seed`. Prints
one JSON object: per engine generated, kept, the share kept, dropped by reason, seconds (draw + validation; the
server's start-up is not counted), tasks generated per hour and kept per hour, and the mean reference length.

Run: `python perf/openworld_tasks.py [--pool data/pool] [--count 200] [--seed 0] [--stub-latency-ms 0]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.openworld.tasks.catalog import PoolCatalog  # noqa: E402
from benchmarks.openworld.tasks.generate import Engine, make_taskset  # noqa: E402
from benchmarks.openworld.tasks.llm import LLMEngine  # noqa: E402
from benchmarks.openworld.tasks.template import TemplateEngine  # noqa: E402
from inference.gecko.client import GeckoClient  # noqa: E402
from utils.llm_stub.config import StubConfig  # noqa: E402
from utils.llm_stub.testing import run_stub  # noqa: E402
from utils.paths import DATA_DIR  # noqa: E402
from utils.procs import gecko_server  # noqa: E402


async def _measure(engine: Engine, catalog: PoolCatalog, url: str, count: int, seed: int) -> dict[str, Any]:
    async with GeckoClient(url) as client:
        result = await make_taskset(engine, catalog, client, count, seed=seed)
    close = getattr(engine, "aclose", None)
    if close is not None:
        await close()
    summary = result.summary()
    return {**{k: summary[k] for k in ("generated", "kept", "dropped", "seconds", "tasks_per_hour", "kept_per_hour")},
            "share_kept": round(result.manifest.kept / max(1, result.manifest.generated), 4),
            "mean_reference_calls": round(statistics.fmean(len(t.reference) for t in result.tasks), 2)
            if result.tasks else None,
            "mean_apps": round(statistics.fmean(len(t.apps) for t in result.tasks), 2) if result.tasks else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=Path, default=DATA_DIR / "pool")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stub-latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    try:
        catalog = PoolCatalog.open(args.pool)
    except (OSError, ValueError) as exc:
        print(f"{exc}", file=sys.stderr)
        return 1
    out: dict[str, Any] = {"pool": str(args.pool), "tools": len(catalog.entries), "toolkits": len(catalog.by_toolkit),
                           "count": args.count, "seed": args.seed, "cpus": os.cpu_count(),
                           "load_average": os.getloadavg()}
    latency = (args.stub_latency_ms, args.stub_latency_ms)
    with tempfile.TemporaryDirectory(prefix="gecko-tasks-perf-") as state, \
            gecko_server([catalog.toolkit_dir], workers=2, state_dir=Path(state), timeout=300) as url:
        out["template"] = asyncio.run(_measure(TemplateEngine(catalog, args.seed), catalog, url, args.count,
                                               args.seed))
        with run_stub(StubConfig(latency_ms=latency)) as stub:
            cold = PoolCatalog.open(args.pool)  # both engines start with no toolkit loaded
            engine = LLMEngine(cold, args.seed, stub.model())
            out["llm_stub"] = {"stub_latency_ms": args.stub_latency_ms,
                               **asyncio.run(_measure(engine, cold, url, args.count, args.seed))}
    out["load_average_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
