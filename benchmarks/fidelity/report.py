"""The fidelity report: every trajectory's step records aggregated into tables (JSON), and a Markdown rendering.

```
validation   confusion matrix of errors (real vs Gecko): overall, by source, by error kind, by tool
response     schema, key-set and state-determined value agreement on calls both sides accepted
state        step-wise (EnvSimBench: exact next state, per field, changed fields) and rollout, split by how many
             fields the real step changed
judge        Gecko's judge vs the official grader, by source and trajectory kind
consistency  REST toolkits: a read after a create/update/delete agrees with it
worst_tools  the tools with the most disagreements of each kind
```
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from benchmarks.fidelity.metrics import Confusion, JudgeTally, change_bucket, mean, rate

WORST = 10
"""Tools listed per worst-offender table."""
BUCKETS = ("no change", "1 field", "2 fields", "3+ fields")


def _steps(records: Iterable[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    return [(record, step) for record in records for step in record.get("steps") or ()]


def _group(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
           key: Callable[[Mapping[str, Any], Mapping[str, Any]], str]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record, step in pairs:
        out[key(record, step)].append(step)
    return dict(sorted(out.items()))


def validation_table(steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Confusion matrix of `real_error` (truth) against `gecko_error` (prediction), and how many of Gecko's errors
    were rejections (422 or unknown tool) rather than tool-level errors."""
    confusion = Confusion()
    for step in steps:
        confusion.add(bool(step["real_error"]), bool(step["gecko_error"]))
    return {**confusion.public(), "rejected": sum(1 for s in steps if s.get("gecko_rejected"))}


def response_table(steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Agreement of the outputs on calls both sides accepted."""
    both = [s["response"] for s in steps if s.get("response")]
    real_schema = [r["real_schema"] for r in both if r["real_schema"] is not None]
    gecko_schema = [r["gecko_schema"] for r in both if r["gecko_schema"] is not None]
    keys = [r["keys"] for r in both if r.get("keys")]
    fields = sum(r["values"][0] for r in both)
    matched = sum(r["values"][1] for r in both)
    return {"n": len(both), "real_schema_valid": rate(sum(real_schema), len(real_schema)),
            "gecko_schema_valid": rate(sum(gecko_schema), len(gecko_schema)),
            "key_set_exact": rate(sum(1 for k in keys if k["exact"]), len(keys)),
            "key_jaccard": mean(k["jaccard"] for k in keys), "value_fields": fields, "value_matched": matched,
            "value_agreement": rate(matched, fields),
            "value_agreement_per_call": mean(r["values"][1] / r["values"][0] for r in both if r["values"][0])}


def state_table(steps: Sequence[Mapping[str, Any]], which: str = "state") -> dict[str, Any]:
    """EnvSimBench measures over the steps whose state was compared (`state`: step-wise; `rollout`)."""
    compared = [s[which] for s in steps if s.get(which)]
    return {"n": len(compared), "exact": rate(sum(1 for c in compared if c["matched"] == c["fields"]), len(compared)),
            "field_agreement": rate(sum(c["matched"] for c in compared), sum(c["fields"] for c in compared)),
            "changed_fields": sum(c["changed"] for c in compared),
            "changed_agreement": rate(sum(c["changed_matched"] for c in compared), sum(c["changed"] for c in compared)),
            "spurious_per_step": mean(c["spurious"] for c in compared),
            "aligned_records": sum(c.get("aligned", 0) for c in compared)}


def state_section(steps: Sequence[Mapping[str, Any]], which: str) -> dict[str, Any]:
    """A state table overall and per change bucket."""
    by_bucket: dict[str, list[Mapping[str, Any]]] = {bucket: [] for bucket in BUCKETS}
    for step in steps:
        if step.get(which):
            by_bucket[change_bucket(step[which]["changed"])].append(step)
    return {"overall": state_table(steps, which),
            "by_change": {bucket: state_table(items, which) for bucket, items in by_bucket.items()}}


def _judge(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    tally = JudgeTally()
    for record in records:
        judge = record.get("judge")
        if judge is not None:
            tally.add(judge.get("official"), judge.get("gecko"))
    return tally.public()


def _consistency(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_check: dict[str, list[bool]] = defaultdict(list)
    by_toolkit: dict[str, dict[str, Any]] = {}
    for record in records:
        checks = record.get("checks") or []
        for check in checks:
            by_check[check["check"]].append(bool(check["consistent"]))
        by_toolkit[record["toolkit"]] = {
            "collections": record.get("collections", 0), "checks": len(checks),
            "consistent": sum(1 for c in checks if c["consistent"]),
            "rate": rate(sum(1 for c in checks if c["consistent"]), len(checks))}
    return {"by_check": {name: {"n": len(values), "consistent": sum(values), "rate": rate(sum(values), len(values))}
                         for name, values in sorted(by_check.items())},
            "by_toolkit": dict(sorted(by_toolkit.items()))}


def _worst(by_tool: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    rows = []
    for tool, steps in by_tool.items():
        validation = validation_table(steps)
        states = [s["state"] for s in steps if s.get("state")]
        response = response_table(steps)
        rows.append({"tool": tool, "calls": len(steps), "validation_misses": validation["fn"] + validation["fp"],
                     "false_negatives": validation["fn"], "false_positives": validation["fp"],
                     "state_steps": len(states), "state_mismatches": sum(1 for c in states if c["matched"] != c["fields"]),
                     "value_mismatches": response["value_fields"] - response["value_matched"],
                     "value_fields": response["value_fields"]})
    worst: dict[str, list[dict[str, Any]]] = {}
    for measure in ("validation_misses", "state_mismatches", "value_mismatches"):
        ranked = sorted((r for r in rows if r[measure]), key=lambda r: (-r[measure], r["tool"]))
        worst[measure] = ranked[:WORST]
    return worst


def build_report(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The whole report from the checkpoint's records (trajectories and REST consistency checks)."""
    trajectories = [r for r in records if r.get("steps") is not None]
    rest = [r for r in records if r.get("checks") is not None]
    pairs = _steps(trajectories)
    steps = [step for _, step in pairs]
    by_source = _group(pairs, lambda r, s: str(r["source"]))
    by_tool = _group(pairs, lambda r, s: f"{r['source']}:{s['tool']}")
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for record in trajectories:
        counts[record["source"]][record["kind"]] += 1
    by_kind_judge: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    by_source_judge: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in trajectories:
        by_kind_judge[record["kind"]].append(record)
        by_source_judge[record["source"]].append(record)
    return {
        "trajectories": {source: dict(kinds) for source, kinds in sorted(counts.items())},
        "steps": len(steps),
        "validation": {"overall": validation_table(steps),
                       "by_source": {k: validation_table(v) for k, v in by_source.items()},
                       "by_kind": {k: validation_table(v) for k, v in _group(pairs, lambda r, s: str(s["kind"])).items()},
                       "by_tool": {k: validation_table(v) for k, v in by_tool.items()}},
        "response": {"overall": response_table(steps),
                     "by_source": {k: response_table(v) for k, v in by_source.items()},
                     "by_tool": {k: response_table(v) for k, v in by_tool.items()}},
        "state": {"stepwise": state_section(steps, "state"), "rollout": state_section(steps, "rollout"),
                  "by_source": {k: {"stepwise": state_table(v, "state"), "rollout": state_table(v, "rollout")}
                                for k, v in by_source.items()}},
        "judge": {"overall": _judge(trajectories),
                  "by_source": {k: _judge(v) for k, v in sorted(by_source_judge.items())},
                  "by_kind": {k: _judge(v) for k, v in sorted(by_kind_judge.items())}},
        "consistency": _consistency(rest),
        "worst_tools": _worst(by_tool),
        "seconds": round(sum(float(r.get("seconds", 0.0)) for r in records), 2),
    }


def headline(report: Mapping[str, Any]) -> dict[str, Any]:
    """The few figures that summarise a report (recorded in `summary.json`)."""
    validation, response = report["validation"]["overall"], report["response"]["overall"]
    stepwise, rollout = report["state"]["stepwise"]["overall"], report["state"]["rollout"]["overall"]
    changed = [v for k, v in report["state"]["stepwise"]["by_change"].items() if k != "no change"]
    consistency = report["consistency"]["by_check"].get("get_after_post", {})
    return {"steps": report["steps"], "validation_tpr": validation["tpr"], "validation_fpr": validation["fpr"],
            "response_key_set_exact": response["key_set_exact"], "response_value_agreement": response["value_agreement"],
            "response_value_agreement_per_call": response["value_agreement_per_call"],
            "state_exact": stepwise["exact"], "state_field_agreement": stepwise["field_agreement"],
            "state_exact_changed": rate(sum((c["exact"] or 0) * c["n"] for c in changed), sum(c["n"] for c in changed)),
            "rollout_state_exact": rollout["exact"], "judge_agreement": report["judge"]["overall"]["agreement"],
            "get_after_post": consistency.get("rate")}


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _table(title: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def render_markdown(report: Mapping[str, Any], title: str = "Fidelity report") -> str:
    """The report as Markdown tables (what `fidelity.md` holds)."""
    lines = [f"# {title}", "", f"Trajectories: {report['trajectories']}; steps: {report['steps']}.", ""]
    val = report["validation"]
    cols: tuple[str, ...] = ("n", "tp", "fn", "fp", "tn", "tpr", "fpr", "accuracy")
    lines += _table("Validation (positive = error)", ("group", *cols),
                    [("all", *(val["overall"][c] for c in cols))]
                    + [(k, *(v[c] for c in cols)) for k, v in val["by_source"].items()]
                    + [(f"kind: {k}", *(v[c] for c in cols)) for k, v in val["by_kind"].items()])
    cols = ("n", "real_schema_valid", "gecko_schema_valid", "key_set_exact", "key_jaccard", "value_fields",
            "value_agreement", "value_agreement_per_call")
    resp = report["response"]
    lines += _table("Response (both sides accepted the call)", ("group", *cols),
                    [("all", *(resp["overall"][c] for c in cols))]
                    + [(k, *(v[c] for c in cols)) for k, v in resp["by_source"].items()])
    cols = ("n", "exact", "field_agreement", "changed_fields", "changed_agreement", "spurious_per_step")
    for which in ("stepwise", "rollout"):
        section = report["state"][which]
        lines += _table(f"State, {which}", ("real step changed", *cols),
                        [("all", *(section["overall"][c] for c in cols))]
                        + [(k, *(v[c] for c in cols)) for k, v in section["by_change"].items()])
    lines += _table("State by source", ("source", "stepwise exact", "stepwise fields", "rollout exact",
                                        "rollout fields"),
                    [(k, v["stepwise"]["exact"], v["stepwise"]["field_agreement"], v["rollout"]["exact"],
                      v["rollout"]["field_agreement"]) for k, v in report["state"]["by_source"].items()])
    cols = ("graded", "agreement", "false_success", "false_success_rate", "false_failure", "false_failure_rate",
            "ungraded", "no_verdict")
    judge = report["judge"]
    lines += _table("Judge vs official grader", ("group", *cols),
                    [("all", *(judge["overall"][c] for c in cols))]
                    + [(k, *(v[c] for c in cols)) for k, v in judge["by_source"].items()]
                    + [(f"kind: {k}", *(v[c] for c in cols)) for k, v in judge["by_kind"].items()])
    consistency = report["consistency"]
    if consistency["by_check"]:
        lines += _table("REST consistency", ("check", "n", "consistent", "rate"),
                        [(k, v["n"], v["consistent"], v["rate"]) for k, v in consistency["by_check"].items()])
    for measure, rows in report["worst_tools"].items():
        lines += _table(f"Worst tools by {measure.replace('_', ' ')}",
                        ("tool", "calls", measure, "false_negatives", "false_positives", "state_steps", "value_fields"),
                        [(r["tool"], r["calls"], r[measure], r["false_negatives"], r["false_positives"],
                          r["state_steps"], r["value_fields"]) for r in rows])
    return "\n".join(lines)
