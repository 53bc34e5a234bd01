"""Safe operation ids and the mapping back to the original tool names."""

from __future__ import annotations

import pytest

from gecko.convert import assign_operation_ids, from_bfcl, operation_names, original_names, safe_name
from gecko.convert.names import SAFE_NAME_RE


@pytest.mark.parametrize(("name", "expected"), [
    ("get_weather", "get_weather"),
    ("Get-Weather-2", "Get-Weather-2"),
    ("math.factorial", "math_factorial"),
    ("triangle_properties.get", "triangle_properties_get"),
    ("a..b", "a_b"),
    ("send message!", "send_message"),
    ("météo.actuelle", "m_t_o_actuelle"),
    ("/users/{id}", "users_id"),
    ("...", "tool"),
    ("", "tool"),
])
def test_safe_name(name: str, expected: str) -> None:
    assert safe_name(name) == expected
    assert SAFE_NAME_RE.match(safe_name(name))


def test_long_names_are_cut_with_a_hash_and_stay_distinct() -> None:
    a, b = "x." * 40 + "alpha", "x." * 40 + "bravo"
    ids = assign_operation_ids([a, b])
    assert all(len(i) == 64 and SAFE_NAME_RE.match(i) for i in ids)
    assert ids[0] != ids[1]
    assert assign_operation_ids([a, b]) == ids


def test_clashes_are_disambiguated_and_safe_names_keep_themselves() -> None:
    # "a b" sorts before "a.b", so it is served first
    assert assign_operation_ids(["a.b", "a_b", "a b"]) == ["a_b_3", "a_b", "a_b_2"]
    assert assign_operation_ids(["a b", "a.b"]) == ["a_b", "a_b_2"]


def test_ids_do_not_depend_on_input_order() -> None:
    names = ["a.b", "a_b", "a b", "c.d", "c-d"]
    forward = dict(zip(names, assign_operation_ids(names)))
    backward = dict(zip(names[::-1], assign_operation_ids(names[::-1])))
    assert forward == backward


def test_a_generated_suffix_never_takes_an_existing_name() -> None:
    ids = assign_operation_ids(["a.b", "a_b", "a_b_2"])
    assert ids == ["a_b_3", "a_b", "a_b_2"]


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        assign_operation_ids(["f", "g", "f"])


def test_round_trip_through_a_document() -> None:
    names = ["math.factorial", "math_factorial", "geo.distance", "send message", "plain"]
    docs = [{"name": n, "description": "", "parameters": {"type": "dict", "properties": {}}} for n in names]
    doc = from_bfcl(docs, title="t")
    forward = operation_names(doc)
    assert sorted(forward.values()) == sorted(names)
    assert all(SAFE_NAME_RE.match(op_id) for op_id in forward)
    back = original_names(doc)
    assert {back[forward[op_id]] for op_id in forward} == set(forward)
    for path, item in doc["paths"].items():
        op = item["post"]
        assert path == "/" + op["operationId"]
        assert forward[op["operationId"]] == op["x-gecko-original-name"]
