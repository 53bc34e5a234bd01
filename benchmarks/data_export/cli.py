"""`gecko data export RUN_DIR… -o OUT`: training data from run directories (see README.md beside this file)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.data_export.export import EmptyExportError, ExportOptions, run_export
from benchmarks.data_export.filters import FilterOptions
from benchmarks.data_export.formats import FORMATS
from benchmarks.data_export.sources import ExportSourceError


def _names(values: list[str] | None) -> frozenset[str]:
    return frozenset(v.strip() for value in values or () for v in value.split(",") if v.strip())


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gecko data export", description=(
        "Turn run directories (gecko bfcl, bfcl-multi, tau2, openworld) and environment rollout files into training "
        "data: OpenAI chat with tools, ShareGPT, DPO pairs from GATS's corrections, a datasets dataset, a card."))
    p.add_argument("sources", nargs="+", type=Path, metavar="RUN_DIR", help="run directories or rollout files")
    p.add_argument("-o", "--out", type=Path, required=True, help="output directory")
    p.add_argument("--formats", default="openai,dpo",
                   help=f"comma-separated, of {', '.join(FORMATS)} (default openai,dpo; hf needs the data extra)")
    p.add_argument("--filter", dest="outcome", choices=("success", "failure", "all"), default="success",
                   help="SFT rows by verdict: the benchmark's official one where it exists, else the judge's "
                        "(default success; a pair's chosen side must always have succeeded)")
    p.add_argument("--gats", choices=("corrections", "final", "all"), default="final",
                   help="SFT rows: final = the attempt GATS chose; corrections = attempt → feedback → fix; "
                        "all = every attempt and the corrections (default final)")
    p.add_argument("--verified", action="store_true",
                   help="keep only rows whose every call replays clean through gecko verify")
    p.add_argument("--first-round", action="store_true",
                   help="only the first action of each task (ToolGym's filter): rows end at the first assistant "
                        "message of the first turn")
    p.add_argument("--benchmark", action="append", help="keep only these benchmarks (repeatable, commas)")
    p.add_argument("--category", action="append", help="keep only these categories / groups")
    p.add_argument("--model", action="append", help="keep only rows of these models")
    p.add_argument("--max-per-task", type=int, help="at most N rows of each kind per source task")
    p.add_argument("--no-dedup", action="store_true", help="keep exact duplicates")
    p.add_argument("--no-near-dedup", action="store_true",
                   help="keep near duplicates (same text but for case, punctuation, spacing, numbers)")
    p.add_argument("--allow-test-tasks", action="store_true",
                   help="export rows made on benchmark test tasks (marked `contaminates`; the card says so)")
    p.add_argument("--validation-fraction", type=float, default=0.1,
                   help="share of tasks (never rows) in the validation split (default 0.1)")
    p.add_argument("--split-seed", type=int, default=0)
    p.add_argument("--toolkits-dir", type=Path,
                   help="the toolkits the run's Gecko served (default: the benchmark's own)")
    p.add_argument("--verify-workers", type=int, default=1, help="processes of --verified's replay")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the export; 0 on success, 1 when nothing could be exported, 2 on a bad command line."""
    args = _parser().parse_intermixed_args(argv)
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        print(f"gecko data export: unknown format(s) {unknown}; choose from {', '.join(FORMATS)}", file=sys.stderr)
        return 2
    if not 0.0 <= args.validation_fraction < 1.0:
        print("gecko data export: --validation-fraction must be in [0, 1)", file=sys.stderr)
        return 2
    if args.max_per_task is not None and args.max_per_task < 1:
        print("gecko data export: --max-per-task must be at least 1", file=sys.stderr)
        return 2
    if "hf" in formats:
        try:
            import datasets  # noqa: F401
        except ImportError:
            print("gecko data export: --formats hf needs the `datasets` library: pip install 'gecko-gats[data]'",
                  file=sys.stderr)
            return 2
    filters = FilterOptions(
        outcome=args.outcome, first_round=args.first_round, benchmarks=_names(args.benchmark),
        categories=_names(args.category), models=_names(args.model), allow_test_tasks=args.allow_test_tasks,
        dedup=not args.no_dedup, near_dedup=not args.no_near_dedup, verified=args.verified,
        max_per_task=args.max_per_task)
    options = ExportOptions(
        sources=list(args.sources), out=args.out, filters=filters, gats=args.gats, formats=formats,
        validation_fraction=args.validation_fraction, split_seed=args.split_seed, toolkits_dir=args.toolkits_dir,
        verify_workers=max(1, args.verify_workers),
        command=shlex.join(["gecko", "data", "export", *(argv if argv is not None else sys.argv[3:])]))
    try:
        summary = run_export(options)
    except (ExportSourceError, EmptyExportError, OSError) as exc:
        print(f"gecko data export: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"out": str(args.out), "rows": summary["rows"], "report": summary["report"],
                      "splits": summary["splits"], "rows_per_s": summary["rows_per_s"]}, indent=2))
    return 0


def data_main(argv: Sequence[str]) -> int:
    """`gecko data <subcommand> …` (only `export` so far)."""
    if argv[:1] != ["export"]:
        print("usage: gecko data export RUN_DIR… -o OUT [flags]   (gecko data export --help)", file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    return main(list(argv[1:]))
