"""The fidelity measures, as pure functions of JSON values (definitions in docs/guides/fidelity.md, tests with known answers).

```
flatten(value)                          JSON pointer → leaf value (scalars and empty containers)
same(a, b)                              leaf equality: numbers by value (1 == 1.0), booleans never equal numbers
compare_states(before, after, sim, …)   EnvSimBench measures of one step: fields, matched, changed, …
key_agreement(real, sim)                key-set Jaccard and equality of two outputs
value_agreement(real, sim, …)           the real output's state-determined fields that the simulation repeats
Confusion                               error vs error: TP, FN, FP, TN, TPR, FPR
JudgeTally                              judge vs official grader: agreement, false successes, false failures
```
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MISSING: Any = object()
"""A leaf a state does not have (compares equal only to itself)."""


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1") if "~" in key or "/" in key else key


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of a JSON value by its JSON pointer: scalars, and empty objects and arrays.

    `{"a": {"b": [1, {}]}}` → `{"/a/b/0": 1, "/a/b/1": {}}`; a scalar root is `{"": value}`.
    """
    out: dict[str, Any] = {}
    stack: list[tuple[str, Any]] = [(prefix, value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict) and node:
            stack.extend((f"{path}/{_escape(str(k))}", v) for k, v in node.items())
        elif isinstance(node, (list, tuple)) and node:
            stack.extend((f"{path}/{i}", v) for i, v in enumerate(node))
        else:
            out[path] = list(node) if isinstance(node, tuple) else node
    return out


def same(a: Any, b: Any) -> bool:
    """Equality of two leaves: numbers by value (`1 == 1.0`, floats to 1e-9 relative), booleans only with
    booleans, `MISSING` only with itself."""
    if a is MISSING or b is MISSING:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) or isinstance(b, float)) and math.isclose(a, b, rel_tol=1e-9)
    return bool(a == b)


def align_new_keys(before: Any, after: Any, sim: Any) -> tuple[Any, int]:
    """`sim` with the key of each record it created renamed to the key the real system created.

    Wherever an object gained exactly one key in the real step (`after` vs `before`) and exactly one other key
    in the simulated step (`sim` vs `before`), the simulated key is renamed: a simulator cannot guess a new
    record's id, and its fields should still be compared with the real record's. Returns the aligned copy
    and how many keys were renamed.
    """
    if not (isinstance(before, Mapping) and isinstance(after, Mapping) and isinstance(sim, Mapping)):
        return sim, 0
    new_real = [k for k in after if k not in before]
    new_sim = [k for k in sim if k not in before]
    renamed = 0
    out = dict(sim)
    if len(new_real) == 1 and len(new_sim) == 1 and new_real[0] != new_sim[0] and new_real[0] not in sim:
        out[new_real[0]] = out.pop(new_sim[0])
        renamed = 1
    for key, value in list(out.items()):
        if key in before and key in after:
            out[key], inner = align_new_keys(before[key], after[key], value)
            renamed += inner
    return out, renamed


@dataclass(frozen=True)
class StateComparison:
    """One step's simulated next state against the real one, on the fields both represent (EnvSimBench)."""

    fields: int
    """Leaves of the real or the simulated next state (union)."""
    matched: int
    """Of those, leaves present in both with the same value."""
    changed: int
    """Leaves the real step changed (added, removed or set to another value)."""
    changed_matched: int
    """Of those, leaves the simulation left in the same final condition (same value, or absent in both)."""
    spurious: int
    """Leaves the simulation changed that the real step did not."""
    aligned: int = 0
    """Created records whose simulated key was renamed to the real key before comparing (`align_new_keys`)."""

    @property
    def exact(self) -> bool:
        """The simulated next state equals the real one on every field."""
        return self.matched == self.fields

    def public(self) -> dict[str, int]:
        """JSON form (the step record)."""
        return {"fields": self.fields, "matched": self.matched, "changed": self.changed,
                "changed_matched": self.changed_matched, "spurious": self.spurious, "aligned": self.aligned}


def restrict(state: Mapping[str, Any] | None, roots: Sequence[str]) -> dict[str, Any]:
    """The part of a state under `roots` (the top-level keys both sides represent)."""
    state = state or {}
    return {root: state[root] for root in roots if root in state}


def compare_states(before: Mapping[str, Any], after: Mapping[str, Any], sim: Mapping[str, Any] | None,
                   roots: Sequence[str], *, flat_before: Mapping[str, Any] | None = None,
                   flat_after: Mapping[str, Any] | None = None) -> StateComparison:
    """Compare a simulated next state with the real one, under `roots` only.

    Args:
        before: the real state before the step (mapped to the simulator's representation).
        after: the real state after the step (same mapping).
        sim: the simulator's state after the step (it started from `before` in step-wise mode).
        roots: the top-level keys both represent (e.g. the involved tool classes); others are ignored.
        flat_before: `flatten(restrict(before, roots))`, when the caller has it already.
        flat_after: `flatten(restrict(after, roots))`, likewise.
    """
    real_before, real_after = restrict(before, roots), restrict(after, roots)
    sim_after, aligned = align_new_keys(real_before, real_after, restrict(sim, roots))
    flat_before = flatten(real_before) if flat_before is None else flat_before
    flat_after = flatten(real_after) if flat_after is None else flat_after
    flat_sim = flatten(sim_after)
    fields = flat_after.keys() | flat_sim.keys()
    matched = sum(1 for p in fields if same(flat_after.get(p, MISSING), flat_sim.get(p, MISSING)))
    touched = flat_before.keys() | flat_after.keys()
    changed = {p for p in touched if not same(flat_before.get(p, MISSING), flat_after.get(p, MISSING))}
    changed_matched = sum(1 for p in changed if same(flat_after.get(p, MISSING), flat_sim.get(p, MISSING)))
    sim_changed = {p for p in flat_before.keys() | flat_sim.keys()
                   if not same(flat_before.get(p, MISSING), flat_sim.get(p, MISSING))}
    return StateComparison(len(fields), matched, len(changed), changed_matched, len(sim_changed - changed), aligned)


def change_bucket(changed: int) -> str:
    """EnvSimBench's split of steps: `no change`, or how many fields the real step changed (1, 2, 3+)."""
    return "no change" if changed == 0 else "3+ fields" if changed >= 3 else f"{changed} field" + "s" * (changed > 1)


@dataclass(frozen=True)
class KeyAgreement:
    """Top-level keys of two object outputs."""

    jaccard: float
    """|common keys| / |all keys| (1.0 when both are empty objects)."""
    exact: bool


def key_agreement(real: Any, sim: Any) -> KeyAgreement | None:
    """Key sets of the real and simulated outputs; None when the real output is not an object."""
    if not isinstance(real, Mapping):
        return None
    if not isinstance(sim, Mapping):
        return KeyAgreement(0.0, False)
    union = real.keys() | sim.keys()
    common = real.keys() & sim.keys()
    return KeyAgreement(len(common) / len(union) if union else 1.0, real.keys() == sim.keys())


def _value_key(value: Any) -> tuple[str, Any] | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return ("n", float(value))
    if isinstance(value, str) and value:
        return ("s", value)
    return None


def value_pool(*values: Any, leaves: Iterable[Any] = ()) -> set[tuple[str, Any]]:
    """The scalar leaves (non-empty strings and numbers; not booleans or null) of some JSON values, plus
    `leaves` (leaf values already flattened)."""
    pool: set[tuple[str, Any]] = set()
    for leaf in [*leaves, *(v for value in values for v in flatten(value).values())]:
        key = _value_key(leaf)
        if key is not None:
            pool.add(key)
    return pool


def state_determined(output: Any, pool: set[tuple[str, Any]]) -> dict[str, Any]:
    """Leaves of a real output whose value occurs in `pool` (the real state's and the call's values): ids,
    names echoed, balances, counts that the state holds. Booleans and nulls never count."""
    return {path: leaf for path, leaf in flatten(output).items() if _value_key(leaf) in pool}


def value_agreement(real: Any, sim: Any, pool: set[tuple[str, Any]]) -> tuple[int, int]:
    """(state-determined fields of the real output, how many the simulated output has with the same value at
    the same JSON pointer)."""
    determined = state_determined(real, pool)
    if not determined:
        return 0, 0
    flat_sim = flatten(sim)
    return len(determined), sum(1 for p, v in determined.items() if same(v, flat_sim.get(p, MISSING)))


@dataclass
class Confusion:
    """Errors of the real tool (the truth) against errors of the simulation (the prediction)."""

    tp: int = 0
    """Both failed."""
    fn: int = 0
    """The real tool failed; the simulation accepted the call."""
    fp: int = 0
    """The real tool succeeded; the simulation failed the call."""
    tn: int = 0
    """Both succeeded."""

    def add(self, real_error: bool, sim_error: bool) -> None:
        """Count one call."""
        if real_error:
            if sim_error:
                self.tp += 1
            else:
                self.fn += 1
        elif sim_error:
            self.fp += 1
        else:
            self.tn += 1

    @property
    def total(self) -> int:
        """Calls counted."""
        return self.tp + self.fn + self.fp + self.tn

    @property
    def tpr(self) -> float | None:
        """TP / (TP + FN): the real errors the simulation also reported; None without real errors."""
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def fpr(self) -> float | None:
        """FP / (FP + TN): the real successes the simulation failed; None without real successes."""
        return _ratio(self.fp, self.fp + self.tn)

    @property
    def accuracy(self) -> float | None:
        """(TP + TN) / total."""
        return _ratio(self.tp + self.tn, self.total)

    def public(self) -> dict[str, Any]:
        """JSON form: the four cells and the rates."""
        return {"n": self.total, "tp": self.tp, "fn": self.fn, "fp": self.fp, "tn": self.tn,
                "tpr": _round(self.tpr), "fpr": _round(self.fpr), "accuracy": _round(self.accuracy)}


@dataclass
class JudgeTally:
    """Gecko's judge against the official grader, one trajectory at a time."""

    agree: int = 0
    false_success: int = 0
    """Gecko said success; the official grader said failure."""
    false_failure: int = 0
    """Gecko said failure; the official grader said success."""
    official_success: int = 0
    official_failure: int = 0
    ungraded: int = 0
    """The official grader gave no verdict (e.g. tau2 tasks that need an NL judge)."""
    no_verdict: int = 0
    """Gecko's judge gave no verdict (it failed; counted apart, never as success)."""

    def add(self, official: bool | None, judged: bool | None) -> None:
        """Count one trajectory (None: no verdict on that side)."""
        if official is None:
            self.ungraded += 1
            return
        if official:
            self.official_success += 1
        else:
            self.official_failure += 1
        if judged is None:
            self.no_verdict += 1
        elif judged == official:
            self.agree += 1
        elif judged:
            self.false_success += 1
        else:
            self.false_failure += 1

    def public(self) -> dict[str, Any]:
        """JSON form: counts, agreement and the two error rates."""
        judged = self.official_success + self.official_failure - self.no_verdict
        return {"graded": self.official_success + self.official_failure, "ungraded": self.ungraded,
                "no_verdict": self.no_verdict, "official_success": self.official_success,
                "official_failure": self.official_failure, "agree": self.agree,
                "agreement": _round(_ratio(self.agree, judged)),
                "false_success": self.false_success,
                "false_success_rate": _round(_ratio(self.false_success, self.official_failure)),
                "false_failure": self.false_failure,
                "false_failure_rate": _round(_ratio(self.false_failure, self.official_success))}


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def mean(values: Iterable[float]) -> float | None:
    """Arithmetic mean, None for no values."""
    items = list(values)
    return _round(sum(items) / len(items)) if items else None


def rate(numerator: float, denominator: float) -> float | None:
    """numerator / denominator rounded to 4 places; None when the denominator is 0."""
    return _round(_ratio(numerator, denominator))
