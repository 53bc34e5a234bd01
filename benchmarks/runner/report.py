"""The figures of a run report, computed from a run directory's own files (no server, no benchmark package).

Read: `config.json` (benchmark, model, retries), `tasks.jsonl` (the checkpoint: status, score, seconds, LLM usage
records of each task; the last line of a key wins) and `traces_<group>.jsonl` (what each task did: GATS attempts
with their verdicts, calls and per-role usage). Computed per run:

- accuracy per group (mean score of the done tasks, as the runner's summary);
- **accuracy as a function of the retry budget**: what the run would have scored had GATS stopped after attempt
  k, with the LLM cost and the latency the first k+1 attempts (of every turn) took. A trace holds its attempts
  either at one level (`attempts`, with `best`: single-turn) or per turn (`turns[].simulated.attempts` and
  `.best`: BFCL multi-turn, tau2's per-reply rehearsals). A task whose every turn ended by attempt k (its chosen
  attempt has an index <= k) keeps its scored answer: with budget k, GATS would have stopped, or chosen, at the
  same attempt. A task where some turn chose a later attempt would have gone on with an earlier attempt, which
  Gecko's judge had failed (GATS stops at the first success): it counts as wrong, and is counted in `estimated`
  (no official verdict exists for that answer; in a multi-turn task the later turns would have differed too);
- tokens and cost per role; the task latency distribution;
- failure kinds: per failed attempt (or unjudged one with a rejected call), `schema` (a call rejected by the
  schema or refused before reaching Gecko), `semantic` (rejected by the check of meaning), `judge` (every call
  accepted, the judge said no), `infrastructure` (the attempt could not run or be judged); and every untested
  task (a provider or Gecko failed after retries) as `infrastructure`;
- with `--faults`: the robustness block (`robustness.py`: accuracy with and without faults, Recovery Rate,
  Flexibility, Schema Compliance, give-up rate, injections by kind, extra calls and tokens).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.runner.robustness import robustness_block

FAILURE_KINDS = ("schema", "semantic", "judge", "infrastructure")
SCHEMA_ERROR_KINDS = frozenset({"unknown_tool", "malformed_arguments"})
"""Call error kinds that never reached Gecko (the executor refused them): counted with the schema failures."""


@dataclass
class TaskRow:
    """One task of a run, as the report shows it."""

    key: str
    group: str
    status: str
    score: float | None
    seconds: float
    turns: list[list[dict[str, Any]]] = field(default_factory=list)
    """GATS attempts per turn, each marked `best` (one turn for single-turn traces; empty without a trace)."""
    tokens: int = 0
    cost_usd: float = 0.0
    reason: str | None = None

    @property
    def attempt_count(self) -> int:
        """Attempts made (over every turn for multi-turn)."""
        return sum(len(turn) for turn in self.turns)


@dataclass
class BudgetPoint:
    """What the run would have scored with `retries` retries."""

    retries: int
    accuracy: float | None
    correct: int
    tasks: int
    estimated: int
    """Tasks counted wrong because their scored answer came from a later attempt."""
    cost_usd: float
    mean_latency_s: float


@dataclass
class RunReport:
    """Everything the report shows of one run."""

    name: str
    path: Path
    benchmark: str
    model: str
    max_retries: int | None
    tasks: list[TaskRow]
    groups: dict[str, dict[str, Any]]
    """Group → done, untested, errored, pending, accuracy."""
    budget: list[BudgetPoint]
    usage_by_role: dict[str, dict[str, float]]
    """Role → calls, input_tokens, output_tokens, cost_usd."""
    failures: dict[str, int]
    latencies_s: list[float]
    robustness: dict[str, Any] | None = None
    """The clean arm against the fault arm of a `--faults` run (`robustness.robustness_block`)."""

    @property
    def accuracy(self) -> float | None:
        """Mean score over every done task."""
        scores = [t.score for t in self.tasks if t.status == "done" and t.score is not None]
        return sum(scores) / len(scores) if scores else None


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line of an interrupted run
            if isinstance(value, dict):
                yield value


def _latest(entries: Iterable[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.get(key) is not None:
            latest[str(entry[key])] = entry
    return latest


def _usage_totals(records: Iterable[dict[str, Any]], into: dict[str, dict[str, float]]) -> tuple[int, float]:
    tokens, cost = 0, 0.0
    for record in records:
        role = into.setdefault(str(record.get("role") or "unknown"),
                               {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})
        role["calls"] += 1
        role["input_tokens"] += int(record.get("input_tokens") or 0)
        role["output_tokens"] += int(record.get("output_tokens") or 0)
        role["cost_usd"] += float(record.get("cost_usd") or 0.0)
        tokens += int(record.get("input_tokens") or 0) + int(record.get("output_tokens") or 0)
        cost += float(record.get("cost_usd") or 0.0)
    return tokens, cost


def _attempt_cost(attempt: dict[str, Any]) -> float:
    return sum(float(role.get("cost_usd") or 0.0) for role in (attempt.get("usage_by_role") or {}).values()
               if isinstance(role, dict))


def _attempt_latency(attempt: dict[str, Any]) -> float:
    latency = attempt.get("latency_s")
    return float(latency.get("total") or 0.0) if isinstance(latency, dict) else float(latency or 0.0)


def failure_kind(attempt: dict[str, Any]) -> str | None:
    """Why an attempt failed (`schema`, `semantic`, `judge`, `infrastructure`), or None when it did not."""
    status = attempt.get("status")
    if status == "error":
        return "infrastructure"
    if status not in ("failed", "unjudged", "skipped"):  # skipped: not judged (no retries), its calls still count
        return None
    sources: set[str] = set()
    for call in attempt.get("calls") or []:
        if call.get("ok"):
            continue
        if call.get("error_kind") in SCHEMA_ERROR_KINDS:
            sources.add("schema")
        for error in call.get("errors") or []:
            sources.add("semantic" if error.get("source") == "semantic" else "schema")
        if not call.get("errors") and call.get("error_kind") not in SCHEMA_ERROR_KINDS:
            sources.add("schema")
    if "schema" in sources:
        return "schema"
    if "semantic" in sources:
        return "semantic"
    return {"failed": "judge", "unjudged": "infrastructure"}.get(str(status))


def _chosen_index(turn: list[dict[str, Any]]) -> int:
    """The index of the attempt a turn went on with (its best; the last one when none is marked)."""
    best = next((a.get("index") for a in turn if a.get("best")), None)
    return int(turn[-1].get("index", len(turn) - 1) if best is None else best)


def budget_curve(tasks: list[TaskRow], max_retries: int) -> list[BudgetPoint]:
    """Accuracy, cost and latency per retry budget 0..max_retries (see the module docstring)."""
    scored = [t for t in tasks if t.status == "done" and t.score is not None and any(t.turns)]
    points = []
    for retries in range(max_retries + 1):
        correct = 0.0
        estimated = 0
        cost = 0.0
        latency: list[float] = []
        for task in scored:
            used = [attempt for turn in task.turns for attempt in turn[:retries + 1]]
            if all(_chosen_index(turn) <= retries for turn in task.turns if turn):
                correct += float(task.score or 0.0)
            else:
                estimated += 1
            cost += sum(_attempt_cost(a) for a in used)
            latency.append(sum(_attempt_latency(a) for a in used))
        points.append(BudgetPoint(retries, correct / len(scored) if scored else None, round(correct), len(scored),
                                  estimated, round(cost, 6), statistics.fmean(latency) if latency else 0.0))
    return points


def _marked(attempts: Any, best: Any) -> list[dict[str, Any]]:
    marked = [dict(a) for a in attempts if isinstance(a, dict)] if isinstance(attempts, list) else []
    for attempt in marked:
        attempt["best"] = attempt.get("index") == best
    return marked


def attempts_by_turn(trace: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """A trace's GATS attempts per turn, each marked `best` (see the module docstring for the two shapes)."""
    if isinstance(trace.get("attempts"), list):
        return [_marked(trace["attempts"], trace.get("best"))]
    turns = trace.get("turns")
    if not isinstance(turns, list):
        return []
    out = []
    for turn in turns:
        simulated = turn.get("simulated") if isinstance(turn, dict) else None
        if isinstance(simulated, dict):
            out.append(_marked(simulated.get("attempts"), simulated.get("best")))
    return out


@dataclass
class RunFiles:
    """A run directory's files as read: `config.json`, the last checkpoint line and the last trace of each key."""

    path: Path
    config: dict[str, Any]
    entries: dict[str, dict[str, Any]]
    traces: dict[str, dict[str, Any]]


def read_run(path: Path) -> RunFiles:
    """Read a run directory, finished or still running (a torn last line is skipped).

    Raises:
        ValueError: `path` is not a run directory (no config.json or tasks.jsonl).
    """
    config_path, tasks_path = path / "config.json", path / "tasks.jsonl"
    if not config_path.is_file() or not tasks_path.is_file():
        raise ValueError(f"{path} is not a run directory (it has no config.json and tasks.jsonl); "
                         "give the directory the runner printed as 'run dir:'")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{config_path} is not JSON: {exc}") from exc
    traces: dict[str, dict[str, Any]] = {}
    for trace_file in sorted(path.glob("traces_*.jsonl")):
        traces.update(_latest(_json_lines(trace_file), "id"))
    return RunFiles(path, config if isinstance(config, dict) else {}, _latest(_json_lines(tasks_path), "key"), traces)


def load_run(path: Path, files: RunFiles | None = None) -> RunReport:
    """The report figures of one run directory (from `files` when already read).

    Raises:
        ValueError: `path` is not a run directory (no config.json or tasks.jsonl).
    """
    files = files or read_run(path)
    config, traces = files.config, files.traces
    settings = config.get("config") or {}
    usage: dict[str, dict[str, float]] = {}
    rows: list[TaskRow] = []
    failures: Counter[str] = Counter({kind: 0 for kind in FAILURE_KINDS})
    entries = files.entries
    for key, entry in entries.items():
        tokens, cost = _usage_totals(entry.get("usage") or [], usage)
        row = TaskRow(key=key, group=str(entry.get("group") or "all"), status=str(entry.get("status")),
                      score=entry.get("score"), seconds=float(entry.get("seconds") or 0.0),
                      turns=attempts_by_turn(traces.get(key, {})), tokens=tokens, cost_usd=cost,
                      reason=entry.get("reason"))
        rows.append(row)
        if row.status == "untested":
            failures["infrastructure"] += 1
        for attempt in (a for turn in row.turns for a in turn):
            kind = failure_kind(attempt)
            if kind is not None:
                failures[kind] += 1
    groups: dict[str, dict[str, Any]] = defaultdict(lambda: {"done": 0, "untested": 0, "errored": 0, "pending": 0,
                                                             "score_sum": 0.0})
    for row in rows:
        group = groups[row.group]
        group[row.status if row.status in group else "pending"] += 1
        if row.status == "done" and row.score is not None:
            group["score_sum"] += float(row.score)
    for group in groups.values():
        group["accuracy"] = group["score_sum"] / group["done"] if group["done"] else None
        del group["score_sum"]
    retries = settings.get("max_retries", settings.get("gats_retries"))
    observed = max((len(turn) - 1 for r in rows for turn in r.turns), default=0)
    budget_max = max(int(retries) if isinstance(retries, int) else 0, observed)
    return RunReport(name=path.name, path=path, benchmark=str(config.get("benchmark") or "?"),
                     model=str(settings.get("model") or settings.get("agent_llm") or "?"),
                     max_retries=retries if isinstance(retries, int) else None, tasks=rows, groups=dict(groups),
                     budget=budget_curve(rows, budget_max), usage_by_role=usage, failures=dict(failures),
                     latencies_s=[r.seconds for r in rows if r.status == "done"],
                     robustness=robustness_block(entries.values()))
