"""Strings chosen by what the field's name says it holds (issue 33 item 7): deterministic per seed, and the schema's
`pattern`, lengths and `enum` still win."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from utils.schema.fieldnames import tokens
from utils.schema.instance import generate_instance, is_valid

STRINGS = ("email", "img_url", "day", "city", "currency", "country", "countryCode", "phoneNumber", "first_name",
           "lastName", "customer_name", "message", "created_at", "zip", "address", "uuid", "website", "start_time")
SCHEMA = {"type": "object", "properties": {name: {"type": "string"} for name in STRINGS}, "required": list(STRINGS)}


def _value(seed: str = "seed") -> dict:
    return generate_instance(SCHEMA, seed)


@pytest.mark.parametrize(("name", "check"), [
    ("email", lambda v: re.fullmatch(r"[a-z]+\.[a-z]+\d+@example\.com", v)),
    ("img_url", lambda v: re.fullmatch(r"https://images\.example\.com/[0-9a-f]+\.jpg", v)),
    ("website", lambda v: v.startswith("https://www.example.com/")),
    ("day", lambda v: dt.date.fromisoformat(v)),
    ("created_at", lambda v: dt.datetime.fromisoformat(v.replace("Z", "+00:00"))),
    ("start_time", lambda v: re.fullmatch(r"\d\d:\d\d", v)),
    ("phoneNumber", lambda v: re.fullmatch(r"\+1-202-555-\d{4}", v)),
    ("countryCode", lambda v: re.fullmatch(r"[A-Z]{2}", v)),
    ("currency", lambda v: re.fullmatch(r"[A-Z]{3}", v)),
    ("zip", lambda v: re.fullmatch(r"\d{5}", v)),
    ("customer_name", lambda v: re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", v)),
    ("message", lambda v: v.endswith(".") and " " in v),
    ("uuid", lambda v: re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", v)),
])
def test_a_field_gets_what_its_name_says(name, check):
    value = _value()[name]
    assert check(value), value
    assert not re.search(r"-(alpha|bravo|cedar|delta|ember|falcon|garnet|harbor|indigo|juniper|kestrel|lumen|maple|"
                         r"nimbus|onyx|pine|quartz|river|sierra|tundra)-[0-9a-f]{4}$", value)


def test_deterministic_per_seed():
    assert _value("a") == _value("a")
    assert _value("a") != _value("b")


def test_the_schema_still_wins():
    schema = {"type": "object", "required": ["email", "city", "country"], "properties": {
        "email": {"type": "string", "pattern": "^[A-Z]{4}$"},
        "city": {"type": "string", "maxLength": 3},
        "country": {"type": "string", "enum": ["Atlantis"]}}}
    value = generate_instance(schema, "s")
    assert is_valid(schema, value) and value["country"] == "Atlantis"


def test_an_unknown_name_keeps_its_placeholder_and_ids_stay_ids():
    value = generate_instance({"type": "object", "required": ["gizmo", "user_id"], "properties": {
        "gizmo": {"type": "string"}, "user_id": {"type": "string"}}}, "s")
    assert value["gizmo"].startswith("gizmo-") and re.fullmatch(r"[0-9A-F]{10}", value["user_id"])


def test_tokens():
    assert tokens("imgURL[0]") == ["img", "url"]
    assert tokens("first_name") == ["first", "name"]
    assert tokens("HTTPStatusCode") == ["http", "status", "code"]
