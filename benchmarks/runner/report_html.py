"""`report.html`: one self-contained page (inline SVG plots drawn with pygal, inline CSS, nothing
fetched from outside) for one or more runs side by side; `gecko report RUN_DIR [RUN_DIR…]` writes it, and the
runner writes one into every run directory it finishes."""

from __future__ import annotations

import argparse
import html
import sys
from collections.abc import Sequence
from pathlib import Path

import pygal
from pygal.style import Style

from benchmarks.runner.report import FAILURE_KINDS, RunReport, load_run

REPORT_FILE = "report.html"
MAX_TASK_ROWS = 5000
"""Tasks listed per run in the tasks table (a full BFCL run has 3,235)."""
LATENCY_BINS = 12
STYLE = Style(background="white", plot_background="white", font_family="system-ui, sans-serif",
              colors=("#1f5fbf", "#d9822b", "#1b7f3b", "#b3261e", "#7e57c2", "#5f6b7a"))
CSS = """body{font:14px/1.45 system-ui,sans-serif;color:#1d2733;margin:1.5rem auto;max-width:1200px;padding:0 1rem}
h1{font-size:1.4rem;overflow-wrap:anywhere}h2{font-size:1.1rem;border-bottom:1px solid #d8dee6;padding-bottom:.2rem;
margin-top:2rem}table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.25rem .5rem;
border-bottom:1px solid #d8dee6}th{background:#f4f6f9}td:first-child,td.muted{overflow-wrap:anywhere;min-width:10rem}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.wide{overflow-x:auto}.plot svg{max-width:100%;height:auto}.muted{color:#5f6b7a}details{margin:.4rem 0}"""
LEGEND_ROW_PX = 24
"""Height of one legend line: every series gets a line of its own under the plot, with its whole name."""


def _chart(kind: type, title: str, series: int = 1, **options: object) -> pygal.Graph:
    """A plot with its legend under it, one whole name per line (long run names neither cut nor overlapping), the
    plot area kept at the same height however many series there are."""
    return kind(title=title, style=STYLE, js=[], disable_xml_declaration=True, width=900,
                height=340 + LEGEND_ROW_PX * max(1, series), legend_at_bottom=True, legend_at_bottom_columns=1,
                print_values=False, truncate_legend=-1, truncate_label=-1, **options)


def _svg(chart: pygal.Graph) -> str:
    return f'<div class="plot">{chart.render(is_unicode=True)}</div>'


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _accuracy_by_group(runs: Sequence[RunReport]) -> str:
    groups = sorted({g for run in runs for g in run.groups})
    chart = _chart(pygal.Bar, "Accuracy per category", len(runs), range=(0, 1), x_title="category",
                   y_title="accuracy", value_formatter=lambda v: f"{v * 100:.0f}%")
    chart.x_labels = groups
    for run in runs:
        chart.add(run.name, [run.groups.get(g, {}).get("accuracy") for g in groups])
    return _svg(chart)


def _budget(runs: Sequence[RunReport]) -> str:
    """Accuracy by retry budget, then the mean latency per task and (when any was paid) the cost by retry budget,
    each in a plot of its own with labelled axes; then the figures as a table."""
    shown = [run for run in runs if any(point.tasks for point in run.budget)]
    budgets = max((len(run.budget) for run in shown), default=0)
    labels = [str(k) for k in range(budgets)]
    x_title = "retries allowed (GATS stopped after k retries)"
    accuracy = _chart(pygal.Line, "Accuracy by retry budget", len(shown), range=(0, 1), dots_size=4, x_title=x_title,
                      y_title="accuracy", value_formatter=lambda v: f"{v * 100:.0f}%")
    latency = _chart(pygal.Line, "Mean latency per task by retry budget", len(shown), dots_size=4, x_title=x_title,
                     y_title="seconds per task", value_formatter=lambda v: f"{v:.3g}", include_x_axis=True)
    cost = _chart(pygal.Line, "Cost by retry budget (all tasks)", len(shown), dots_size=4, x_title=x_title,
                  y_title="US dollars", value_formatter=lambda v: f"{v:.4g}", include_x_axis=True)
    accuracy.x_labels = latency.x_labels = cost.x_labels = labels
    for run in shown:
        accuracy.add(run.name, [p.accuracy for p in run.budget])
        latency.add(run.name, [p.mean_latency_s for p in run.budget])
        cost.add(run.name, [p.cost_usd for p in run.budget])
    paid = any(p.cost_usd for run in shown for p in run.budget)
    plots = _svg(accuracy) + _svg(latency) + (_svg(cost) if paid else "")
    rows = "".join(
        f"<tr><td>{html.escape(run.name)}</td><td class=n>{p.retries}</td><td class=n>{_pct(p.accuracy)}</td>"
        f"<td class=n>{p.correct}/{p.tasks}</td><td class=n>{p.estimated}</td><td class=n>{p.cost_usd:.4f}</td>"
        f"<td class=n>{p.mean_latency_s:.3f}</td></tr>" for run in runs for p in run.budget)
    return (plots + "<table><tr><th>run</th><th>retries</th><th>accuracy</th><th>correct</th>"
            "<th>counted wrong (answer from a later attempt)</th><th>cost $</th><th>mean latency s</th></tr>"
            f"{rows}</table>")


def _usage(runs: Sequence[RunReport]) -> str:
    roles = sorted({role for run in runs for role in run.usage_by_role})
    if not roles:
        return '<p class="muted">No LLM usage recorded (rules engines and scripted agents make no LLM calls).</p>'
    tokens = _chart(pygal.Bar, "Tokens per role (input + output)", len(runs), x_title="role", y_title="tokens")
    cost = _chart(pygal.Bar, "Cost per role", len(runs), x_title="role", y_title="US dollars")
    tokens.x_labels = cost.x_labels = roles
    for run in runs:
        tokens.add(run.name, [run.usage_by_role.get(r, {}).get("input_tokens", 0)
                              + run.usage_by_role.get(r, {}).get("output_tokens", 0) for r in roles])
        cost.add(run.name, [run.usage_by_role.get(r, {}).get("cost_usd", 0.0) for r in roles])
    return _svg(tokens) + _svg(cost)


def _latency(runs: Sequence[RunReport]) -> str:
    values = [v for run in runs for v in run.latencies_s]
    if not values:
        return '<p class="muted">No finished task.</p>'
    top = max(values) or 1.0
    width = top / LATENCY_BINS
    chart = _chart(pygal.Bar, "Task latency (seconds, tasks per bin)", len(runs), x_title="seconds per task",
                   y_title="tasks", x_label_rotation=30)
    chart.x_labels = [f"{i * width:.2f}–{(i + 1) * width:.2f}" for i in range(LATENCY_BINS)]
    for run in runs:
        counts = [0] * LATENCY_BINS
        for value in run.latencies_s:
            counts[min(int(value / width), LATENCY_BINS - 1)] += 1
        chart.add(run.name, counts)
    return _svg(chart)


def _failures(runs: Sequence[RunReport]) -> str:
    chart = _chart(pygal.Bar, "Failure kinds (failed attempts; infrastructure: untested tasks and attempts)", len(runs),
                   x_title="kind", y_title="attempts")
    chart.x_labels = list(FAILURE_KINDS)
    for run in runs:
        chart.add(run.name, [run.failures.get(kind, 0) for kind in FAILURE_KINDS])
    return _svg(chart)


def _overview(runs: Sequence[RunReport]) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(run.name)}</td><td>{html.escape(run.benchmark)}</td><td>{html.escape(run.model)}</td>"
        f"<td class=n>{'—' if run.max_retries is None else run.max_retries}</td><td class=n>{len(run.tasks)}</td>"
        f"<td class=n>{sum(t.status == 'done' for t in run.tasks)}</td>"
        f"<td class=n>{sum(t.status == 'untested' for t in run.tasks)}</td>"
        f"<td class=n>{sum(t.status == 'errored' for t in run.tasks)}</td><td class=n>{_pct(run.accuracy)}</td>"
        f"<td class=n>{sum(t.cost_usd for t in run.tasks):.4f}</td><td class=muted>{html.escape(str(run.path))}</td>"
        "</tr>" for run in runs)
    return ('<div class="wide"><table><tr><th>run</th><th>benchmark</th><th>model</th><th>retries</th><th>tasks</th>'
            "<th>done</th><th>untested</th><th>errored</th><th>accuracy</th><th>cost $</th><th>directory</th></tr>"
            f"{rows}</table></div>")


def _tasks(run: RunReport) -> str:
    shown = sorted(run.tasks, key=lambda t: (t.group, t.key))[:MAX_TASK_ROWS]
    rows = "".join(
        f"<tr><td>{html.escape(t.key)}</td><td>{html.escape(t.group)}</td><td>{html.escape(t.status)}</td>"
        f"<td class=n>{'—' if t.score is None else f'{t.score:g}'}</td><td class=n>{t.attempt_count}</td>"
        f"<td class=n>{t.tokens}</td><td class=n>{t.cost_usd:.4f}</td><td class=n>{t.seconds:.3f}</td>"
        f"<td>{html.escape(t.reason or '')}</td></tr>" for t in shown)
    more = f'<p class="muted">{len(run.tasks) - len(shown)} more not listed.</p>' if len(run.tasks) > len(shown) else ""
    return (f"<details><summary>{html.escape(run.name)}: {len(run.tasks)} tasks</summary><table><tr><th>task</th>"
            "<th>group</th><th>status</th><th>score</th><th>attempts</th><th>tokens</th><th>cost $</th>"
            f"<th>seconds</th><th>reason</th></tr>{rows}</table>{more}</details>")


def _robustness(runs: Sequence[RunReport]) -> str:
    """One row per `--faults` run: accuracy with and without faults and the robustness metrics ('' for none)."""
    rows = []
    for run in runs:
        block = run.robustness
        if not block:
            continue
        accuracy, rates = block["accuracy"], block["metrics"]["faults"]["all"]
        extra = block["extra"]["calls_per_task"]["extra"]
        kinds = ", ".join(f"{kind} {v['injected']}" for kind, v in block["by_kind"].items())
        cells = [_pct(accuracy["paired_clean"]), _pct(accuracy["paired_faults"]), _pct(rates["recovery_rate"]),
                 _pct(rates["recovery_rate_injected"]), _pct(rates["flexibility"]), _pct(rates["schema_compliance"]),
                 _pct(rates["give_up_rate"]), "—" if extra is None else f"{extra:+.2f}"]
        policy = block.get("policy") or {}
        rows.append(f"<tr><td>{html.escape(run.name)}</td><td>{html.escape(str(policy.get('name') or 'custom'))} "
                    f"(seed {html.escape(str(policy.get('seed', '—')))})</td><td class=n>{block['tasks']['paired']}</td>"
                    + "".join(f"<td class=n>{cell}</td>" for cell in cells) + f"<td>{html.escape(kinds)}</td></tr>")
    if not rows:
        return ""
    return ("<h2>Robustness under faults</h2><p class=muted>Each task ran clean and under the fault policy "
            "(--faults); rates over the fault arm's calls, accuracy over the tasks done in both arms.</p><table><tr>"
            "<th>run</th><th>policy</th><th>tasks</th><th>accuracy clean</th><th>under faults</th>"
            "<th>recovery</th><th>recovery after injected</th><th>flexibility</th><th>schema compliance</th>"
            f"<th>give-up</th><th>extra calls/task</th><th>injected</th></tr>{''.join(rows)}</table>")


def render(runs: Sequence[RunReport]) -> str:
    """The report page of `runs` (side by side when several)."""
    title = "Gecko run report: " + ", ".join(run.name for run in runs)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>"
            f"<h2>Runs</h2>{_overview(runs)}"
            f"<h2>Accuracy per category</h2>{_accuracy_by_group(runs)}"
            f"{_robustness(runs)}"
            "<h2>Accuracy by retry budget</h2><p class=muted>What each run would have scored had GATS stopped after "
            "k retries, from its attempt records (in multi-turn runs, the attempts of every turn; a task that went on "
            "with a later attempt than k in some turn is counted wrong); below it, the mean latency and the cost of "
            "the first k+1 attempts.</p>"
            f"{_budget(runs)}"
            f"<h2>Tokens and cost per role</h2>{_usage(runs)}"
            f"<h2>Latency</h2>{_latency(runs)}"
            f"<h2>Failure kinds</h2>{_failures(runs)}"
            f"<h2>Tasks</h2>{''.join(_tasks(run) for run in runs)}"
            "</body></html>")


def write_report(run_dirs: Sequence[Path], output: Path | None = None) -> Path:
    """Write the report of `run_dirs` (default: `report.html` in the first one); returns its path.

    Raises:
        ValueError: a path is not a run directory.
    """
    runs = [load_run(path) for path in run_dirs]
    target = output or run_dirs[0] / REPORT_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_text(render(runs), encoding="utf-8")
    temporary.replace(target)
    return target


def report_command(argv: Sequence[str] | None = None) -> int:
    """`gecko report RUN_DIR [RUN_DIR…] [--output FILE]`; returns the exit code."""
    parser = argparse.ArgumentParser(prog="gecko report", description=(
        "Write a self-contained report.html (plots as inline SVG) of one or more run directories, side by side."))
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--output", "-o", type=Path, default=None,
                        help="where to write it (default: report.html in the first RUN_DIR)")
    args = parser.parse_args(argv)
    try:
        path = write_report(args.run_dirs, args.output)
    except (ValueError, OSError) as exc:
        print(f"gecko report: {exc}", file=sys.stderr)
        return 1
    print(f"report: {path}")
    return 0
