#!/usr/bin/env python3
"""`gecko verify` on BFCL ground truth (data nobody here wrote), and on seeded perturbations of it.

1. Every ground-truth sample of the Python single-turn categories shipped by the installed `bfcl-eval`
   (simple_python, multiple, parallel, parallel_multiple, live_simple, live_multiple, live_parallel,
   live_parallel_multiple) is written as one JSON Lines file (question line + `ground_truth`) and
   verified with the rules engines through the streaming CLI path (`verify_dataset`, `--jobs` worker
   processes): throughput, verdicts, and the samples that do not pass (BFCL data bugs) by id.
2. Each sample, with each perturbation kind that applies to it (`gecko.verify.perturb`, seed 0), is
   replayed in-process: every perturbed sample must get `invalid_call` with the expected error kind.

Prints one JSON object. Run: `python perf/verify_bfcl.py [--jobs 2] [--repeat 1]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from importlib.resources import files
from pathlib import Path
from typing import Any

from gecko.pipeline.engines import build_engines
from gecko.verify import PERTURBATIONS, Verifier, VerifyOptions, perturb_sample, read_sample, verify_dataset
from gecko.verify.perturb import EXPECTED_ERROR
from utils.settings import Settings

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
              "live_parallel", "live_parallel_multiple")


def _jsonl(name: str) -> list[dict[str, Any]]:
    text = (files("bfcl_eval") / "data" / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def build_dataset(path: Path) -> Counter[str]:
    """The ground-truth samples of every category, one JSON line each; returns samples per category."""
    counts: Counter[str] = Counter()
    with path.open("w", encoding="utf-8") as out:
        for category in CATEGORIES:
            truth = {e["id"]: e["ground_truth"] for e in _jsonl(f"possible_answer/BFCL_v4_{category}.json")}
            for question in _jsonl(f"BFCL_v4_{category}.json"):
                if question["id"] in truth:
                    out.write(json.dumps({**question, "ground_truth": truth[question["id"]]}) + "\n")
                    counts[category] += 1
    return counts


async def perturbed(path: Path, settings: Settings) -> dict[str, Any]:
    """Every applicable perturbation of every sample: how many were made and how many were flagged as expected."""
    verifier = Verifier(build_engines(settings))
    made: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    missed: list[str] = []
    started = time.perf_counter()
    for index, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        sample = read_sample(line, index)
        operations = verifier.operations(sample)
        for kind in PERTURBATIONS:
            faulty = perturb_sample(sample, kind, operations, seed=0)
            if faulty is None:
                continue
            made[kind] += 1
            result = await verifier.verify(faulty)
            kinds = {e["keyword"] for c in result["calls"] for e in c.get("errors", ())}
            if result["verdict"] == "invalid_call" and EXPECTED_ERROR[kind] in kinds:
                flagged[kind] += 1
            elif len(missed) < 20:
                missed.append(faulty.id)
    seconds = time.perf_counter() - started
    return {"made": dict(made), "flagged": dict(flagged), "all_flagged": made == flagged, "missed": missed,
            "samples_per_s_in_process": round(sum(made.values()) / seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="copies of the dataset in the throughput run")
    args = parser.parse_args()
    settings = Settings()
    with tempfile.TemporaryDirectory() as tmp:
        dataset = Path(tmp) / "bfcl_ground_truth.jsonl"
        counts = build_dataset(dataset)
        if args.repeat > 1:
            dataset.write_text(dataset.read_text(encoding="utf-8") * args.repeat, encoding="utf-8")
        started = time.perf_counter()
        summary = verify_dataset(VerifyOptions(input=dataset, output=Path(tmp) / "results.jsonl",
                                               settings=settings, workers=args.jobs))
        wall = time.perf_counter() - started
        perturbations = asyncio.run(perturbed(Path(tmp) / "bfcl_ground_truth.jsonl", settings)) if args.repeat == 1 \
            else asyncio.run(perturbed(_first_copy(dataset, sum(counts.values())), settings))
    print(json.dumps({
        "categories": dict(counts), "samples": summary["samples"], "jobs": args.jobs,
        "verdicts": summary["verdicts"], "error_kinds": summary["error_kinds"],
        "not_passed": summary["not_passed"],
        "samples_per_s": summary["run"]["samples_per_s"],
        "samples_per_s_with_start": round(summary["samples"] / wall, 1),
        "perturbations": perturbations,
    }, indent=2))


def _first_copy(dataset: Path, count: int) -> Path:
    lines = dataset.read_text(encoding="utf-8").splitlines()[:count]
    first = dataset.with_name("first_copy.jsonl")
    first.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return first


if __name__ == "__main__":
    main()
