"""Each fidelity measure on hand-made cases whose answers are worked out by hand."""

from __future__ import annotations

from benchmarks.fidelity.metrics import (
    MISSING,
    Confusion,
    JudgeTally,
    align_new_keys,
    change_bucket,
    compare_states,
    flatten,
    key_agreement,
    same,
    state_determined,
    value_agreement,
    value_pool,
)
from benchmarks.fidelity.report import build_report, headline


def test_flatten_escapes_keys_and_keeps_empty_containers():
    assert flatten({"a/b": {"c~d": [1, {}]}, "e": []}) == {"/a~1b/c~0d/0": 1, "/a~1b/c~0d/1": {}, "/e": []}
    assert flatten(5) == {"": 5}


def test_same_compares_numbers_by_value_never_booleans_with_numbers():
    assert same(1, 1.0) and same(0.1 + 0.2, 0.3) and not same(True, 1) and not same(0, False)
    assert same(MISSING, MISSING) and not same(MISSING, None) and same("a", "a")


def test_compare_states_counts_fields_changes_and_spurious_changes():
    before = {"bank": {"balance": 100, "owner": "ann", "log": []}, "other": {"x": 1}}
    after = {"bank": {"balance": 70, "owner": "ann", "log": ["-30"]}, "other": {"x": 2}}
    # the simulator got the balance right, forgot the log entry, and renamed the owner (spurious)
    sim = {"bank": {"balance": 70.0, "owner": "bob", "log": []}, "other": {"x": 99}}
    result = compare_states(before, after, sim, ["bank"])
    # fields: /bank/balance, /bank/owner, /bank/log/0 (real), /bank/log (sim: empty list leaf) → 4
    assert result.fields == 4 and result.matched == 1 and not result.exact
    # real changes: balance, log/0 added, log (empty leaf) removed → 3; simulation matched the balance only
    assert result.changed == 3 and result.changed_matched == 1
    # simulation changed balance (real did too) and owner (real did not) → 1 spurious
    assert result.spurious == 1
    assert compare_states(before, after, after, ["bank"]).exact
    unchanged = compare_states(before, before, before, ["bank"])
    assert unchanged.exact and unchanged.changed == 0 and unchanged.spurious == 0


def test_new_records_are_aligned_to_the_real_key():
    before = {"t": {"orders": {"A": {"n": 1}}}}
    after = {"t": {"orders": {"A": {"n": 1}, "R7": {"n": 2}}}}
    sim = {"t": {"orders": {"A": {"n": 1}, "S9": {"n": 2}}}}
    aligned, renamed = align_new_keys(before, after, sim)
    assert renamed == 1 and aligned == after
    result = compare_states(before, after, sim, ["t"])
    assert result.exact and result.aligned == 1 and result.changed == 1 and result.changed_matched == 1


def test_change_buckets():
    assert [change_bucket(n) for n in (0, 1, 2, 3, 9)] == ["no change", "1 field", "2 fields", "3+ fields",
                                                           "3+ fields"]


def test_key_agreement():
    assert key_agreement({"a": 1, "b": 2}, {"a": 0, "c": 3}).jaccard == 1 / 3
    assert key_agreement({"a": 1}, {"a": 2}).exact
    assert key_agreement([1], {"a": 1}) is None and key_agreement({"a": 1}, [1]).jaccard == 0.0
    assert key_agreement({}, {}).jaccard == 1.0


def test_value_agreement_counts_only_state_determined_fields():
    pool = value_pool({"balance": 70, "name": "ann"}, leaves=["R7"])
    assert pool == {("n", 70.0), ("s", "ann"), ("s", "R7")}
    real = {"id": "R7", "balance": 70, "name": "ann", "ok": True, "note": "free text"}
    assert state_determined(real, pool) == {"/id": "R7", "/balance": 70, "/name": "ann"}
    sim = {"id": "X1", "balance": 70.0, "name": "ann", "ok": True, "note": "other"}
    assert value_agreement(real, sim, pool) == (3, 2)
    assert value_agreement({"ok": True}, {}, pool) == (0, 0)


def test_confusion_matrix_rates():
    confusion = Confusion()
    for real, sim in [(True, True)] * 3 + [(True, False)] + [(False, True)] + [(False, False)] * 3:
        confusion.add(real, sim)
    assert (confusion.tp, confusion.fn, confusion.fp, confusion.tn) == (3, 1, 1, 3)
    assert confusion.tpr == 0.75 and confusion.fpr == 0.25 and confusion.accuracy == 0.75
    assert Confusion().public()["tpr"] is None


def test_judge_tally():
    tally = JudgeTally()
    for official, judged in [(True, True), (True, False), (False, True), (False, False), (None, True),
                             (False, None)]:
        tally.add(official, judged)
    public = tally.public()
    assert public["graded"] == 5 and public["ungraded"] == 1 and public["no_verdict"] == 1
    assert public["agreement"] == 0.5 and public["false_success"] == 1 and public["false_failure"] == 1
    assert public["false_success_rate"] == round(1 / 3, 4) and public["false_failure_rate"] == 0.5


def _step(real_error: bool, gecko_error: bool, state: dict | None = None, **extra) -> dict:
    return {"tool": "t", "kind": "none", "real_error": real_error, "gecko_error": gecko_error, "state": state,
            "rollout": state, **extra}


def test_report_aggregates_hand_made_records():
    exact = {"fields": 2, "matched": 2, "changed": 1, "changed_matched": 1, "spurious": 0, "aligned": 0}
    wrong = {"fields": 2, "matched": 1, "changed": 1, "changed_matched": 0, "spurious": 1, "aligned": 0}
    still = {"fields": 2, "matched": 2, "changed": 0, "changed_matched": 0, "spurious": 0, "aligned": 0}
    response = {"real_schema": True, "gecko_schema": True, "keys": {"jaccard": 1.0, "exact": True},
                "values": [4, 3]}
    records = [
        {"source": "s", "kind": "gold", "judge": {"official": True, "gecko": True},
         "steps": [_step(False, False, exact, response=response), _step(True, True, still)]},
        {"source": "s", "kind": "perturbed", "judge": {"official": False, "gecko": True},
         "steps": [_step(True, False, wrong), _step(False, False, still)]},
        {"source": "rest", "toolkit": "k", "checks": [{"check": "get_after_post", "collection": "/a",
                                                       "consistent": True, "detail": ""}]},
    ]
    report = build_report(records)
    top = headline(report)
    assert report["validation"]["overall"]["tp"] == 1 and report["validation"]["overall"]["fn"] == 1
    assert top["validation_tpr"] == 0.5 and top["validation_fpr"] == 0.0
    assert top["state_exact"] == 0.75 and top["state_exact_changed"] == 0.5
    assert top["response_value_agreement"] == 0.75 and top["get_after_post"] == 1.0
    judge = report["judge"]["overall"]
    assert judge["agreement"] == 0.5 and judge["false_success"] == 1
