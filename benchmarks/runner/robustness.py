"""The robustness block of a run with `--faults`: the clean arm against the fault arm (see `faults.py`).

Read from the checkpoint's entries (the latest of every selected key), so `summary.json`, the printed table and
`gecko report` show the same figures, and a resumed run counts its earlier tasks too. Each task records its
robustness counts (`utils.faults.metrics.RobustnessCounts` per side, in its row's `robustness`); the block sums
them per arm and takes the ratios (a rate with nothing to count is None):

| field | what |
|---|---|
| `accuracy` | mean score of the done tasks of each arm (`clean`, `faults`) and over the tasks done in both (`paired_clean`, `paired_faults`, `drop` = clean − faults) |
| `groups` | the same per group (the clean group's name) |
| `metrics` | per arm and side (`all`, `real`, `simulated`): Recovery Rate (all failed calls, and injected ones), Flexibility, Schema Compliance, give-up rate |
| `injected` | injections of the fault arm: total, errors (blocking kinds), by kind |
| `by_kind` | per injected kind: injections, fault-arm tasks that met it, their accuracy |
| `extra` | per task, over the tasks done in both arms: calls and LLM tokens in each arm, and the extra the faults caused |
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from benchmarks.runner.faults import POLICY_KEY, clean_group, clean_key, is_fault_arm
from utils.faults.metrics import RobustnessCounts

ROBUSTNESS_KEY = "robustness"
"""A task row's field with its counts per side (`side_counts`)."""
SIDES = ("all", "real", "simulated")


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _tokens(usage: Iterable[Mapping[str, Any]]) -> int:
    return sum(int(u.get("input_tokens") or 0) + int(u.get("output_tokens") or 0) for u in usage)


def _calls(info: Mapping[str, Any]) -> int:
    return int(((info.get(ROBUSTNESS_KEY) or {}).get("all") or {}).get("calls") or 0)


def _arm_metrics(infos: list[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for side in SIDES:
        total = RobustnessCounts()
        for info in infos:
            total.add(RobustnessCounts.from_public((info.get(ROBUSTNESS_KEY) or {}).get(side)))
        if total.calls or side == "all":
            out[side] = {**total.rates(), "calls": total.calls, "failed": total.failed,
                         "injected_errors": total.injected_errors, "episodes": total.episodes}
    return out


def _per_task(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]], value: Any) -> dict[str, Any]:
    clean = _mean([float(value(c)) for c, _ in pairs])
    faults = _mean([float(value(f)) for _, f in pairs])
    extra = None if clean is None or faults is None else round(faults - clean, 6)
    return {"clean": clean, "faults": faults, "extra": extra}


def robustness_block(entries: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The block over the latest entry of every selected key (JSON entries: `key`, `group`, `status`, `score`,
    `info`, `usage`); None when no entry is of a fault arm."""
    arms: dict[bool, dict[str, Mapping[str, Any]]] = {False: {}, True: {}}
    for entry in entries:
        arms[is_fault_arm(str(entry["key"]))][clean_key(str(entry["key"]))] = entry
    if not arms[True]:
        return None
    done = {faulted: {k: e for k, e in arm.items() if e.get("status") == "done"} for faulted, arm in arms.items()}
    pairs = [(done[False][k], done[True][k]) for k in done[False] if k in done[True]]

    def scores(rows: Iterable[Mapping[str, Any]]) -> list[float]:
        return [float(e["score"]) for e in rows if e.get("score") is not None]

    paired_clean, paired_faults = _mean(scores(c for c, _ in pairs)), _mean(scores(f for _, f in pairs))
    groups: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: {"clean": [], "faults": []})
    for faulted, arm in done.items():
        for entry in arm.values():
            groups[clean_group(str(entry.get("group")))]["faults" if faulted else "clean"].append(entry)
    injected: dict[str, int] = defaultdict(int)
    kind_tasks: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for entry in done[True].values():
        by_kind = (((entry.get("info") or {}).get(ROBUSTNESS_KEY) or {}).get("all") or {}).get("by_kind") or {}
        for kind, count in by_kind.items():
            injected[kind] += int(count)
            kind_tasks[kind].append(entry)
    fault_infos = [e.get("info") or {} for e in done[True].values()]
    metrics = {"clean": _arm_metrics([e.get("info") or {} for e in done[False].values()]),
               "faults": _arm_metrics(fault_infos)}
    policy = next((info[POLICY_KEY] for info in fault_infos if info.get(POLICY_KEY)), None)
    return {
        "policy": policy,
        "tasks": {"clean_done": len(done[False]), "faults_done": len(done[True]), "paired": len(pairs)},
        "accuracy": {"clean": _mean(scores(done[False].values())), "faults": _mean(scores(done[True].values())),
                     "paired_clean": paired_clean, "paired_faults": paired_faults,
                     "drop": None if paired_clean is None or paired_faults is None
                     else round(paired_clean - paired_faults, 6)},
        "groups": {name: {"clean": _mean(scores(arm["clean"])), "faults": _mean(scores(arm["faults"])),
                          "clean_done": len(arm["clean"]), "faults_done": len(arm["faults"])}
                   for name, arm in sorted(groups.items())},
        "metrics": metrics,
        "injected": {"total": sum(injected.values()), "errors": metrics["faults"]["all"]["injected_errors"],
                     "by_kind": dict(sorted(injected.items()))},
        "by_kind": {kind: {"injected": injected[kind], "tasks": len(tasks), "accuracy": _mean(scores(tasks))}
                    for kind, tasks in sorted(kind_tasks.items())},
        "extra": {"calls_per_task": _per_task(pairs, lambda e: _calls(e.get("info") or {})),
                  "tokens_per_task": _per_task(pairs, lambda e: _tokens(e.get("usage") or []))},
    }


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def robustness_lines(block: Mapping[str, Any] | None) -> list[str]:
    """The block as the lines printed under the run's table ([] for None)."""
    if not block:
        return []
    policy = block.get("policy") or {}
    tasks, accuracy = block["tasks"], block["accuracy"]
    rates = block["metrics"]["faults"]["all"]
    clean_rates = block["metrics"]["clean"]["all"]
    kinds = ", ".join(f"{kind} {v['injected']} (tasks {v['tasks']}, accuracy {_fmt(v['accuracy'])})"
                      for kind, v in block["by_kind"].items()) or "none"
    calls, tokens = block["extra"]["calls_per_task"], block["extra"]["tokens_per_task"]
    return [
        f"\nrobustness under faults (policy {policy.get('name') or 'custom'}, seed {policy.get('seed', '-')}; "
        f"{tasks['paired']} tasks done in both arms):",
        f"  accuracy    clean {_fmt(accuracy['paired_clean'])}  under faults {_fmt(accuracy['paired_faults'])}  "
        f"drop {_fmt(accuracy['drop'])}",
        f"  recovery rate {_fmt(rates['recovery_rate'])} (clean {_fmt(clean_rates['recovery_rate'])}; after an "
        f"injected error {_fmt(rates['recovery_rate_injected'])})  flexibility {_fmt(rates['flexibility'])}  "
        f"schema compliance {_fmt(rates['schema_compliance'])}  give-up rate {_fmt(rates['give_up_rate'])}",
        f"  injected    {block['injected']['total']} ({block['injected']['errors']} errors): {kinds}",
        f"  per task    calls {_fmt(calls['clean'], 2)} → {_fmt(calls['faults'], 2)} ({_signed(calls['extra'])}), "
        f"LLM tokens {_fmt(tokens['clean'], 1)} → {_fmt(tokens['faults'], 1)} ({_signed(tokens['extra'])})",
    ]
