#!/usr/bin/env python3
"""The paper-style GATS table for one model: BFCL single-turn accuracy per category at 0, 1 and 2 retries, with
tokens and time per task and the schema errors Gecko caught and the retries fixed.

Starts Gecko on the BFCL single-turn toolkits (`--state-model none`, the gating `rules` judge unless
`--judge-model`), runs the same tasks once per retry budget on the shared runner (the code of `gecko bfcl`), and
prints the figures as one JSON object, then the markdown table. For whoever has a capable model: a provider alias,
a GPU server, or `python -m utils.local_model serve --model YOUR.gguf`.

    python perf/gats_lift.py --model gpt-4.1-mini [--categories simple_python,multiple,parallel,irrelevance]
        [--num-tasks 20] [--retries 0,1,2] [--workers 4] [--max-tokens 512] [--judge-model rules]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bfcl.benchmark import BfclSingleTurn
from benchmarks.bfcl.run_config import BfclRunConfig
from benchmarks.bfcl.runtime import OPENAPI_DIR
from benchmarks.runner import RunOptions, run_benchmark
from utils.llm import load_env
from utils.procs import gecko_server
from utils.roles import PLANNER

DEFAULT_CATEGORIES = "simple_python,multiple,parallel,irrelevance"


def _traces(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted(run_dir.glob("traces_*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line]


def _tokens(trace: dict[str, Any]) -> int:
    return sum(int(role.get("input_tokens", 0)) + int(role.get("output_tokens", 0))
               for role in (trace.get("usage_by_role") or {}).values())


def _schema_errors(traces: list[dict[str, Any]]) -> dict[str, int]:
    """Calls Gecko rejected (422 from the syntactic or semantic check), tasks with one, and tasks whose best attempt
    came after a rejected call and has none: the errors the retries fixed."""
    caught = tasks = fixed = 0
    for trace in traces:
        attempts = trace.get("attempts") or []
        rejected = [sum(call.get("status") == 422 for call in a.get("calls", [])) for a in attempts]
        caught += sum(rejected)
        if any(rejected):
            tasks += 1
            best = trace.get("best")
            first_rejected = next(i for i, n in enumerate(rejected) if n)
            if best is not None and best > first_rejected and attempts[best].get("validation_errors") == 0:
                fixed += 1
    return {"calls_rejected": caught, "tasks_with_rejections": tasks, "tasks_fixed_by_retries": fixed}


async def _run(args: argparse.Namespace, url: str, retries: int, out: Path) -> dict[str, Any]:
    categories = tuple(c for c in args.categories.split(",") if c)
    config = BfclRunConfig(categories=categories, model=args.model, num_tasks=args.num_tasks, max_retries=retries,
                           max_tokens=args.max_tokens, max_steps=args.max_steps)
    options = RunOptions(output_dir=out / f"retries_{retries}", gecko_url=url, workers=args.workers, progress=False)
    started = time.perf_counter()
    summary = await run_benchmark(BfclSingleTurn(config, options), options)
    wall = time.perf_counter() - started
    traces = _traces(summary.run_dir)
    done = [t for t in traces if t.get("status") != "untested"]
    return {
        "retries": retries,
        "accuracy": {name: None if group.score is None else round(group.score, 4) for name, group in summary.groups.items()},
        "tasks": len(traces), "untested": summary.total.untested + summary.total.errored,
        "tokens_per_task": round(sum(map(_tokens, done)) / len(done), 1) if done else None,
        "seconds_per_task": round(sum(float(t.get("latency_s") or 0) for t in done) / len(done), 3) if done else None,
        "attempts_per_task": round(sum(len(t.get("attempts") or []) for t in done) / len(done), 2) if done else None,
        "schema_errors": _schema_errors(traces), "wall_s": round(wall, 1),
    }


def _table(rows: list[dict[str, Any]]) -> str:
    categories = list(rows[0]["accuracy"]) if rows else []
    head = ["retries", *categories, "tokens/task", "s/task", "rejected calls", "fixed by retries"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [str(row["retries"]), *(f"{row['accuracy'][c]:.1%}" if row["accuracy"][c] is not None else "–"
                                       for c in categories),
                 str(row["tokens_per_task"]), str(row["seconds_per_task"]), str(row["schema_errors"]["calls_rejected"]),
                 str(row["schema_errors"]["tasks_fixed_by_retries"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="scripted-noisy", help=(
        "the planner: an alias or openai-compatible:<model>@<url> (default scripted-noisy: the offline fixture that "
        "makes schema errors and fixes what Gecko names, so `make perf` shows the table without a model)"))
    parser.add_argument("--categories", default=DEFAULT_CATEGORIES)
    parser.add_argument("--num-tasks", type=int, default=20, help="first N tasks of each category (default 20)")
    parser.add_argument("--retries", default="0,1,2", help="retry budgets, one run each (default 0,1,2)")
    parser.add_argument("--workers", type=int, default=4, help="tasks run concurrently")
    parser.add_argument("--max-tokens", type=int, default=PLANNER.max_tokens, help="planner output cap")
    parser.add_argument("--max-steps", type=int, default=10, help="planner steps per attempt")
    parser.add_argument("--judge-model", default="rules", help="Gecko's judge: rules (the gate) or a model alias")
    args = parser.parse_args()
    load_env()
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gats-lift-") as tmp, gecko_server(
            [OPENAPI_DIR / "single_turn"], workers=2, state_dir=Path(tmp) / "state", timeout=300,
            extra=["--state-model", "none", "--judge-model", args.judge_model, "--no-cache"]) as url:
        for retries in (int(r) for r in args.retries.split(",") if r.strip()):
            rows.append(asyncio.run(_run(args, url, retries, Path(tmp))))
    print(render({"benchmark": "gats_lift", "model": args.model, "judge": args.judge_model,
                  "categories": args.categories.split(","), "num_tasks": args.num_tasks, "rows": rows,
                  "wall_s": round(time.perf_counter() - started, 1)}))
    return 0


def render(result: dict[str, Any]) -> str:
    """What the script prints: the figures as one JSON object, then the markdown table as text (not a string inside
    the JSON, whose escaped newlines no one can read)."""
    return f"{json.dumps(result, indent=2)}\n\n{_table(result['rows'])}"


if __name__ == "__main__":
    raise SystemExit(main())
