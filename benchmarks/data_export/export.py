"""One export: sources → episodes → rows → filters → files, the report and the card."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.data_export.card import render_card
from benchmarks.data_export.filters import ExportReport, FilterOptions, apply_filters
from benchmarks.data_export.formats import (
    SPLITS,
    dpo_row,
    openai_row,
    sharegpt_row,
    split_of,
    write_hf,
    write_jsonl,
)
from benchmarks.data_export.model import Row
from benchmarks.data_export.rows import GatsSelection, dpo_rows, sft_rows
from benchmarks.data_export.sources import read_source
from benchmarks.data_export.verify import verify_rows


@dataclass
class ExportOptions:
    """One export."""

    sources: list[Path]
    out: Path
    filters: FilterOptions = field(default_factory=FilterOptions)
    gats: GatsSelection = "final"
    formats: tuple[str, ...] = ("openai", "dpo")
    validation_fraction: float = 0.1
    split_seed: int = 0
    toolkits_dir: Path | None = None
    verify_workers: int = 1
    command: str = "gecko data export"


class EmptyExportError(ValueError):
    """Every row was dropped; the message says by which filters."""


def _rows(options: ExportOptions, sources: list[dict[str, Any]]) -> list[Row]:
    rows: list[Row] = []
    for path in options.sources:
        benchmark, episodes = read_source(path, options.toolkits_dir)
        count, models = 0, set()
        for episode in episodes:
            count += 1
            models.add(episode.task.model)
            rows += sft_rows(episode, options.gats, options.filters.first_round)
            if "dpo" in options.formats or "hf" in options.formats:
                rows += dpo_rows(episode, options.filters.first_round)
        sources.append({"path": str(path), "benchmark": benchmark, "model": ", ".join(sorted(models)) or "-",
                        "episodes": count})
    return rows


def run_export(options: ExportOptions) -> dict[str, Any]:
    """Export; returns the summary (also `export_report.json` and the card `README.md` in `options.out`).

    Raises:
        ExportSourceError: a source cannot be read.
        EmptyExportError: no row was kept.
    """
    started = time.perf_counter()
    sources: list[dict[str, Any]] = []
    candidates = _rows(options, sources)
    read_s = time.perf_counter() - started
    report = ExportReport()
    workers = options.verify_workers
    kept = apply_filters(candidates, options.filters, report, lambda rows: verify_rows(rows, workers))
    if not kept:
        test = sum(c.dropped.get("test_task", 0) for c in report.kinds.values())
        hint = (f" ({test} rows come from benchmark test tasks: add --allow-test-tasks to export them, marked "
                "`contaminates`)") if test else ""
        raise EmptyExportError(f"no row kept{hint}; drops by reason: {json.dumps(report.public())}")
    sft = [r for r in kept if r.kind != "dpo"]
    pairs = [r for r in kept if r.kind == "dpo"]
    by_split: dict[str, dict[str, list[Row]]] = {name: {s: [] for s in SPLITS} for name in ("sft", "dpo")}
    for row in kept:
        by_split["dpo" if row.kind == "dpo" else "sft"][split_of(row, options.validation_fraction,
                                                                  options.split_seed)].append(row)
    options.out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Any] = {}
    writers = {"openai": ("sft", openai_row), "sharegpt": ("sft", sharegpt_row), "dpo": ("dpo", dpo_row)}
    for fmt, (name, convert) in writers.items():
        if fmt in options.formats and by_split[name] and (sft if name == "sft" else pairs):
            files[fmt] = {split: write_jsonl(options.out / fmt / f"{split}.jsonl", map(convert, rows))
                          for split, rows in by_split[name].items() if rows}
    if "hf" in options.formats:
        files["hf"] = {}
        for name, convert in (("sft", openai_row), ("dpo", dpo_row)):
            splits = {split: [convert(r) for r in rows] for split, rows in by_split[name].items() if rows}
            write_hf(options.out, name, splits)
            if splits:
                files["hf"][name] = {split: len(rows) for split, rows in splits.items()}
    elapsed = time.perf_counter() - started
    summary: dict[str, Any] = {
        "command": options.command, "sources": sources,
        "filters": {**asdict(options.filters), "gats": options.gats,
                    "validation_fraction": options.validation_fraction, "split_seed": options.split_seed},
        "report": report.public(), "files": files,
        "splits": {name: {s: len(r) for s, r in splits.items()} for name, splits in by_split.items()},
        "contaminates": dict(Counter(r.episode.task.contaminates for r in kept if r.episode.task.contaminates)),
        "rows": {"candidates": len(candidates), "kept": len(kept)},
        "seconds": {"read": round(read_s, 3), "total": round(elapsed, 3)},
        "rows_per_s": round(len(candidates) / elapsed, 1) if elapsed else None,
    }
    summary["filters"] = json.loads(json.dumps(summary["filters"], default=sorted))
    (options.out / "export_report.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (options.out / "README.md").write_text(render_card(summary), encoding="utf-8")
    return summary
