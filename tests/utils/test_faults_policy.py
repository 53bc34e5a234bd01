"""The fault-policy format, the seeded decision and the effects of every intervention kind (`utils.faults`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from utils.faults import (
    CallFacts,
    Earlier,
    FaultPolicy,
    FaultState,
    Injection,
    PolicyError,
    corrupt,
    corrupt_text,
    decide,
    draw,
    load_policy,
    observe,
    parse_policy,
    profile_names,
    service_error,
    with_notice,
)

WRITE = CallFacts(("notes/create_note", "create_note", "create_note"), "write", "simulated")
READ = CallFacts(("notes/get_note", "get_note", "get_note"), "read", "simulated")


def _policy(*rules: dict, seed: int = 0) -> FaultPolicy:
    return parse_policy({"seed": seed, "rules": list(rules)})


def _run(policy: FaultPolicy, facts_seq: list[CallFacts]) -> list[tuple[str, str] | None]:
    state = FaultState()
    out = []
    for facts in facts_seq:
        injection = decide(policy, state, facts)
        out.append(None if injection is None else (injection.rule, injection.kind))
        observe(state, facts.access, ok=injection is None or not injection.blocking)
    return out


def test_shipped_profiles_load_and_name_their_rules() -> None:
    assert profile_names() == ["flaky-network", "moving-goalposts", "rate-limited", "stale-reads"]
    for name in profile_names():
        policy = load_policy(name)
        assert policy.name == name and policy.rules


def test_invalid_policies_list_every_problem_with_where() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy({"rules": [
            {"name": "a", "when": {"probability": 2}, "do": {"kind": "rate_limit"}},
            {"name": "b", "when": {"from": 5, "until": 2}, "do": {"kind": "delay"}},
            {"name": "c", "do": {"kind": "explode"}},
        ]})
    message = str(caught.value)
    assert "rules.0.when.probability" in message and "until (2) is before from (5)" in message
    assert "rules.1.do.delay.seconds" not in message and "rules.1.do.seconds" in message  # the tag is left out
    assert "'explode'" in message
    with pytest.raises(PolicyError, match="repeated: x"):
        parse_policy({"rules": [{"name": "x", "do": {"kind": "stale_read"}}, {"name": "x", "do": {"kind": "stale_read"}}]})
    with pytest.raises(PolicyError, match="needs a value"):
        parse_policy({"rules": [{"name": "x", "do": {"kind": "external_change", "patch": [{"op": "add", "path": "/a"}]}}]})
    with pytest.raises(PolicyError, match="exactly one of"):
        parse_policy({"rules": [{"name": "x", "when": {"state": {"path": "/a"}}, "do": {"kind": "stale_read"}}]})
    with pytest.raises(PolicyError, match="unknown|Extra inputs"):
        parse_policy({"rules": [{"name": "x", "when": {"tool": "a"}, "do": {"kind": "stale_read"}}]})
    with pytest.raises(PolicyError, match="expected a mapping"):
        parse_policy([1])


def test_load_policy_reads_yaml_and_json_and_names_bad_files(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(json.dumps({"name": "j", "rules": [{"name": "r", "do": {"kind": "stale_read"}}]}))
    (tmp_path / "p.yaml").write_text("name: y\nrules:\n  - name: r\n    do: {kind: delay, seconds: 0.5}\n")
    (tmp_path / "bad.yaml").write_text("rules: [\n")
    assert load_policy(tmp_path / "p.json").name == "j"
    assert load_policy(str(tmp_path / "p.yaml")).rules[0].do.seconds == 0.5
    with pytest.raises(PolicyError, match="not valid YAML"):
        load_policy(tmp_path / "bad.yaml")
    with pytest.raises(PolicyError, match="profiles: flaky-network"):
        load_policy("no-such-profile")


def test_selectors_tools_access_numbers_writes_and_limit() -> None:
    policy = _policy(
        {"name": "glob", "when": {"tools": ["notes/get_*"], "calls": [1, 2]}, "do": {"kind": "rate_limit"}},
        {"name": "writes", "when": {"access": "write", "every": 2, "from": 2, "until": 6}, "do": {"kind": "unavailable"},
         "limit": 2},
        {"name": "after", "when": {"after_writes": 3, "access": "read"}, "do": {"kind": "delay", "seconds": 1}},
    )
    calls = [READ, WRITE, WRITE, WRITE, READ, WRITE, WRITE, READ]
    assert _run(policy, calls) == [
        ("glob", "rate_limit"),     # 1: a read matching the glob
        ("writes", "unavailable"),  # 2: the 2nd call, a write
        None,                       # 3: odd
        ("writes", "unavailable"),  # 4: limit reached after this one
        None,                       # 5: a read, but only one write has gone through
        None,                       # 6: limit
        None,                       # 7: odd
        ("after", "delay"),         # 8: three successful writes by now
    ]


def test_decisions_are_a_function_of_seed_stream_rule_and_call_number() -> None:
    policy = _policy({"name": "coin", "when": {"probability": 0.3}, "do": {"kind": "server_error", "status": 502}},
                     seed=11)
    first = _run(policy, [WRITE] * 200)
    assert first == _run(policy, [WRITE] * 200)  # an exact replay
    hits = sum(x is not None for x in first)
    assert 40 <= hits <= 80  # ~30 % of 200
    other = _run(policy.for_stream("task-2"), [WRITE] * 200)
    assert other != first  # another stream draws its own sequence
    assert draw(11, "", "coin", 5) == draw(11, "", "coin", 5) != draw(12, "", "coin", 5)
    # the definition, so replays of recorded runs keep their faults: BLAKE2b-64 of `seed|stream|rule|call|salt`
    digest = hashlib.blake2b(b"11|t/real|coin|5|", digest_size=8).digest()
    assert draw(11, "t/real", "coin", 5) == int.from_bytes(digest, "big") / 2**64
    state = FaultState()
    decide(policy, state, WRITE)
    assert FaultState.from_public(json.loads(json.dumps(state.public()))) == state  # stored with the session


def test_state_condition_and_side() -> None:
    policy = _policy({"name": "placed", "when": {"state": {"path": "/order/status", "equals": "placed"}, "side": "real"},
                      "do": {"kind": "corrupt"}})
    placed = CallFacts(WRITE.names, "write", "real", state=lambda: {"order": {"status": "placed"}})
    shipped = CallFacts(WRITE.names, "write", "real", state=lambda: {"order": {"status": "shipped"}})
    simulated = CallFacts(WRITE.names, "write", "simulated", state=lambda: {"order": {"status": "placed"}})
    assert _run(policy, [placed, shipped, simulated]) == [("placed", "corrupt"), None, None]
    missing = _policy({"name": "gone", "when": {"state": {"path": "/x", "not_equals": 1}}, "do": {"kind": "corrupt"}})
    assert _run(missing, [CallFacts(READ.names, "read", "simulated", state=lambda: {})]) == [("gone", "corrupt")]


def test_stale_read_needs_an_earlier_answer_from_before_a_change() -> None:
    policy = _policy({"name": "stale", "do": {"kind": "stale_read"}})
    fresh = CallFacts(READ.names, "read", "simulated", mark=3, earlier=Earlier({"v": 1}, 3))
    changed = CallFacts(READ.names, "read", "simulated", mark=4, earlier=Earlier({"v": 1}, 3))
    assert _run(policy, [READ, fresh, changed, WRITE]) == [None, None, ("stale", "stale_read"), None]


def test_expire_session_opens_a_window_of_refused_calls() -> None:
    policy = _policy({"name": "exp", "when": {"calls": [2]}, "do": {"kind": "expire_session", "calls": 3}})
    state = FaultState()
    kinds = [decide(policy, state, READ) for _ in range(6)]
    assert [k.kind if k else None for k in kinds] == [None, "expire_session", "expire_session", "expire_session",
                                                      None, None]
    assert kinds[2].params == {"window": True} and kinds[1].rule == kinds[3].rule == "exp"


def test_service_errors_of_the_blocking_kinds() -> None:
    def error(kind: str, **params):
        return service_error(Injection("r", kind, "tool", 1, params))

    assert (error("timeout", seconds=7).status, error("timeout", seconds=7).detail) == (504, "the service did not answer within 7 s")
    limited = error("rate_limit", retry_after=2.5)
    assert limited.status == 429 and limited.headers() == {"Retry-After": "2.5"} and limited.payload()["retry_after"] == 2.5
    assert error("unavailable").status == 503 and error("unavailable").headers() == {"Retry-After": "1"}
    assert error("server_error", status=502).title == "Bad Gateway"
    assert error("expire_session").status == 401
    for kind in ("timeout", "rate_limit", "unavailable", "server_error", "expire_session"):
        assert "inject" not in json.dumps(error(kind).payload())  # looks like a real service's error
    with pytest.raises(ValueError):
        error("delay")
    assert Injection("r", "timeout", "tool", 1, {"executed": True}).executed
    assert not Injection("r", "stale_read", "state", 1).executed


def test_corruption_is_seeded_and_says_what_it_did() -> None:
    body = {"id": 1, "items": [{"a": 1}, {"a": 2}, {"a": 3}, {"a": 4}], "title": "hello"}
    injection = Injection("r", "corrupt", "state", 3, {"mode": "drop_field"}, 0.25)
    damaged, what = corrupt(body, injection)
    assert corrupt(body, injection) == (damaged, what) and body["id"] == 1  # the same damage, on a copy
    pointer = what["pointer"]
    assert what["mode"] == "drop_field" and pointer.startswith("/") and damaged != body
    nulled, what = corrupt(body, Injection("r", "corrupt", "state", 3, {"mode": "null_field"}, 0.25))
    assert what["pointer"] == pointer and nulled != body and "null" in json.dumps(nulled)
    cut, what = corrupt(body, Injection("r", "corrupt", "state", 3, {"mode": "truncate"}))
    assert what == {"mode": "truncate", "pointer": "/items"} and len(cut["items"]) == 2
    assert corrupt(5, injection) == (None, {"mode": "drop_field", "pointer": "", "replaced": "null"})
    text, what = corrupt_text("plain words here", injection)
    assert text == "plain wo" and what["mode"] == "truncate"
    assert with_notice({"a": 1}, "n") == {"a": 1, "_notice": "n"} and with_notice([1], "n") == {"result": [1], "_notice": "n"}


def test_a_blank_glob_is_what_the_documents_pattern_calls_blank() -> None:
    """The schema says a glob matches `\\S` (ECMA-262: U+0085 and U+001C-U+001F are not whitespace there), so the
    model refuses exactly the globs that pattern refuses: a schema-valid policy is never a 422 (make fuzz, ST202)."""
    from utils.faults.policy import Match

    for glob in ("\x85", "\x1c", "a b", "*"):
        assert Match(tools=[glob]).tools == (glob,)
    for blank in ("", " ", "\t\u3000\ufeff"):
        with pytest.raises(ValueError, match="non-empty glob"):
            Match(tools=[blank])
