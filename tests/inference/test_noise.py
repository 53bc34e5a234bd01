"""The noisy agent's error model: seeded, applicable kinds only, named by the right feedback."""

from __future__ import annotations

from inference.agents.noise import NOISE_KINDS, Corruption, is_named, plan_corruptions
from inference.tools import CallRecord, CatalogTool, ToolError, ToolOutcome

SPEC = CatalogTool("tk", "f", "mod.f", "mod_f", parameters={
    "type": "object", "additionalProperties": False, "required": ["n", "unit"],
    "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 10},
                   "unit": {"type": "string", "enum": ["cm", "m"]}, "note": {"type": "string"}}})
ARGS = {"n": 5, "unit": "cm", "note": "hello"}


def test_plans_are_seeded_and_cover_every_kind() -> None:
    calls = [(SPEC, ARGS)] * 200
    first = plan_corruptions(calls, key="task", seed=1, error_rate=1.0)
    assert first == plan_corruptions(calls, key="task", seed=1, error_rate=1.0)
    assert first != plan_corruptions(calls, key="task", seed=2, error_rate=1.0)
    assert {c.kind for c in first if c is not None} == set(NOISE_KINDS)
    assert all(c is None for c in plan_corruptions(calls, key="task", error_rate=0.0))


def test_each_kind_changes_what_it_says() -> None:
    plan = [c for c in plan_corruptions([(SPEC, ARGS)] * 200, key="k", error_rate=1.0) if c is not None]
    by_kind = {c.kind: c for c in plan}
    assert by_kind["misspelled_tool"].name == "mod_ff" and by_kind["misspelled_tool"].arguments == ARGS
    assert "verbose" in by_kind["unknown_argument"].arguments
    missing = by_kind["missing_required"]
    assert missing.argument in ("n", "unit") and missing.argument not in missing.arguments
    wrong = by_kind["wrong_type"]
    assert type(wrong.arguments[wrong.argument]) is not type(ARGS[wrong.argument])
    out = by_kind["out_of_range"]
    assert out.arguments[out.argument] not in (["cm", "m"] if out.argument == "unit" else range(1, 11))
    semantic = by_kind["semantic"]
    assert not semantic.detectable and semantic.arguments[semantic.argument] != ARGS[semantic.argument]
    if semantic.argument == "n":
        assert 1 <= semantic.arguments["n"] <= 10


def _record(outcome: ToolOutcome) -> CallRecord:
    return CallRecord("scripted_0", 0, "mod_f", "{}", {}, SPEC, outcome, 0.0)


def test_named_only_by_matching_feedback() -> None:
    wrong = Corruption(0, "wrong_type", "n", "mod_f", {"n": "5"}, "")
    semantic = Corruption(0, "semantic", "note", "mod_f", {"note": "x"}, "")
    misspelled = Corruption(0, "misspelled_tool", None, "mod_ff", {}, "")
    type_error = ToolOutcome(False, "", status=422, error_kind="invalid_arguments",
                             errors=(ToolError("must be an integer", "/n", "type"),))
    other_error = ToolOutcome(False, "", status=422, errors=(ToolError("bad", "/unit", "enum"),))
    semantic_error = ToolOutcome(False, "", status=422, errors=(ToolError("note is not what was asked", "", "semantic"),))
    unknown = ToolOutcome(False, "", error_kind="unknown_tool", reached_backend=False)
    assert is_named(wrong, _record(type_error)) and not is_named(wrong, _record(other_error))
    assert not is_named(semantic, _record(type_error)) and is_named(semantic, _record(semantic_error))
    assert is_named(misspelled, _record(unknown)) and not is_named(misspelled, _record(type_error))
    assert not is_named(wrong, None) and not is_named(wrong, _record(ToolOutcome(True, "{}")))
