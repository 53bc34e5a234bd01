"""The amplification recipe (`make data`): seed tools → new tasks → agents with GATS in Gecko → export → verify.

```
gecko pool build --only bfcl-multi-turn --out OUT/pool           the seed: real tool definitions (no npm needed)
gecko openworld tasks --pool OUT/pool --out OUT/tasks --count N  new tasks, each validated by running in Gecko
gecko openworld --tasks OUT/tasks --agent A --gecko-url auto     per agent: GATS attempts in Gecko, judged
gecko data export OUT/runs/*/ -o OUT/export --formats openai,dpo,hf
gecko verify OUT/export/openai/{train,validation}.jsonl         every exported call replayed: % valid
```

Offline by default (scripted agents, rules engines); `--agent-llm MODEL` runs the agents on any
OpenAI-compatible model (an alias or `openai-compatible:NAME@URL`). Generated tasks are no benchmark's test tasks,
so the export needs no `--allow-test-tasks`. Prints one JSON object: the export's counts and verify's summary.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

AGENTS = ("select-execute", "planner-actor")


class RecipeError(RuntimeError):
    """A step of the recipe failed; the message names it."""


def _step(name: str, code: int) -> None:
    if code != 0:
        raise RecipeError(f"{name} exited with {code}")


def run_recipe(out: Path, count: int = 20, seed: int = 0, agent_llm: str | None = None,
               agents: Sequence[str] = AGENTS, formats: str = "openai,dpo,hf") -> dict[str, Any]:
    """Run every step into `out`; returns the export's and the verification's summaries.

    Raises:
        RecipeError: a step failed.
    """
    from benchmarks.data_export.cli import main as export_main
    from benchmarks.openworld.pool.cli import main as pool_main
    from benchmarks.openworld.tasks.cli import main as tasks_main
    from benchmarks.registry import BENCHMARKS, load_benchmark
    from benchmarks.runner import run_command
    from gecko.verify.cli import main as verify_main

    pool, tasks, runs, export = out / "pool", out / "tasks", out / "runs", out / "export"
    if not (pool / "toolkits").is_dir():
        _step("gecko pool build", pool_main(["build", "--only", "bfcl-multi-turn", "--out", str(pool)]))
        logging.getLogger("httpx").setLevel(logging.WARNING)  # the pool command logs at INFO: not a line per request
    _step("gecko openworld tasks", tasks_main(["tasks", "--pool", str(pool), "--out", str(tasks),
                                               "--count", str(count), "--seed", str(seed)]))
    for agent in agents:
        model = ["--agent-llm", agent_llm] if agent_llm else []
        _step(f"gecko openworld --agent {agent}", run_command(
            load_benchmark("openworld"),
            ["--tasks", str(tasks), "--agent", agent, "--pool", str(pool), *model, "--gecko-url", "auto",
             "--output-dir", str(runs), "--no-progress"], prog="gecko openworld", description=BENCHMARKS["openworld"].help))
    run_dirs = sorted(str(p) for p in runs.iterdir() if (p / "tasks.jsonl").is_file())
    _step("gecko data export", export_main([*run_dirs, "-o", str(export), "--formats", formats,
                                            "--validation-fraction", "0.2"]))
    samples, verdicts = 0, Counter[str]()
    for split in sorted((export / "openai").glob("*.jsonl")):
        results = export / f"verify-{split.stem}.jsonl"
        _step("gecko verify", verify_main([str(split), "-o", str(results), "--force", "--no-progress", "-j", "1"]))
        summary = json.loads(results.with_name(results.name + ".summary.json").read_text(encoding="utf-8"))
        samples += int(summary.get("samples") or 0)
        verdicts.update(summary.get("verdicts") or {})
    report = json.loads((export / "export_report.json").read_text(encoding="utf-8"))
    return {"out": str(out), "runs": run_dirs, "export": {"rows": report["rows"], "report": report["report"],
                                                          "splits": report["splits"]},
            "verify": {"samples": samples, "verdicts": dict(verdicts)}}


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m benchmarks.data_export.recipe --out DIR [--count N] [--agent-llm MODEL]`; 0 done, 1 a step failed."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.data_export.recipe", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="working directory (pool, tasks, runs, export)")
    parser.add_argument("--count", type=int, default=20, help="tasks to draw (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agent-llm", help="the agents' model (default: the scripted agents, offline)")
    parser.add_argument("--agent", action="append", choices=AGENTS, help="agents to run (default both)")
    args = parser.parse_args(argv)
    try:
        result = run_recipe(args.out, args.count, args.seed, args.agent_llm, args.agent or AGENTS)
    except RecipeError as exc:
        print(f"data recipe: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
