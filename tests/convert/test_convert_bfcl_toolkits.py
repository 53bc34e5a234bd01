"""The BFCL toolkits built by scripts/build_toolkits.py from the installed bfcl-eval package."""

from __future__ import annotations

import filecmp
import json
from importlib import resources
from pathlib import Path

import pytest

from gecko.convert import operation_names
from gecko.pipeline.synthesize.rules import synthesize_rules
from gecko.toolkits import load_toolkits
from tests.convert.convert_support import run_build

# The session's build of the BFCL toolkits (given up to 600 s) falls in the first test's set-up.
pytestmark = pytest.mark.timeout(900)
COUNTS = {
    "simple_python": 400, "simple_java": 100, "simple_javascript": 50, "multiple": 200, "parallel": 200,
    "parallel_multiple": 200, "irrelevance": 240,
    "live_simple": 258, "live_multiple": 1053, "live_parallel": 16, "live_parallel_multiple": 24,
    "live_irrelevance": 884, "live_relevance": 16,
}
CLASSES = ("GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot", "TravelAPI",
           "VehicleControlAPI", "WebSearchAPI")  # the eight multi-turn classes, and web_search's
WRITES = {
    "GorillaFileSystem": {"cd", "cp", "echo", "mkdir", "mv", "rm", "rmdir", "touch"},
    "MathAPI": set(),
    "MessageAPI": {"add_contact", "delete_message", "message_login", "send_message"},
    "TwitterAPI": {"authenticate_twitter", "comment", "follow_user", "mention", "post_tweet", "retweet", "unfollow_user"},
    "TicketAPI": {"close_ticket", "create_ticket", "edit_ticket", "logout", "resolve_ticket", "ticket_login"},
    "TradingBot": {"add_to_watchlist", "cancel_order", "fund_account", "place_order", "remove_stock_from_watchlist",
                   "trading_login", "trading_logout", "withdraw_funds"},
    "TravelAPI": {"authenticate_travel", "book_flight", "cancel_booking", "purchase_insurance", "register_credit_card",
                  "set_budget_limit"},
    "VehicleControlAPI": {"activateParkingBrake", "adjustClimateControl", "fillFuelTank", "lockDoors", "pressBrakePedal",
                          "releaseBrakePedal", "setCruiseControl", "setHeadlights", "set_navigation", "startEngine"},
    "WebSearchAPI": set(),
}


def single_turn(data_dir: Path) -> Path:
    return data_dir / "bfcl" / "openapi" / "single_turn"


def multi_turn(data_dir: Path) -> Path:
    return data_dir / "bfcl" / "openapi" / "multi_turn"


def bfcl_entries(category: str) -> list[dict]:
    text = (resources.files("bfcl_eval") / "data" / f"BFCL_v4_{category}.json").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_one_toolkit_per_single_turn_task(bfcl_data_dir: Path) -> None:
    stems = {p.stem for p in single_turn(bfcl_data_dir).glob("*.json")}
    assert len(stems) == sum(COUNTS.values()) == 3641
    for category, count in COUNTS.items():
        assert sum(1 for s in stems if s.rsplit("_", 1)[0] == category) == count, category


def test_each_task_toolkit_holds_exactly_its_functions(bfcl_data_dir: Path) -> None:
    for category in COUNTS:
        for entry in bfcl_entries(category):
            doc = json.loads((single_turn(bfcl_data_dir) / f"{entry['id']}.json").read_text(encoding="utf-8"))
            assert doc["info"]["title"] == entry["id"]
            assert sorted(operation_names(doc).values()) == sorted(f["name"] for f in entry["function"])
            for fn in entry["function"]:
                op_id = next(k for k, v in operation_names(doc).items() if v == fn["name"])
                schema = doc["paths"][f"/{op_id}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
                assert list(schema["properties"]) == list(fn["parameters"].get("properties", {}))
                assert schema.get("required", []) == fn["parameters"].get("required", [])


def test_multi_turn_toolkits(bfcl_data_dir: Path) -> None:
    registry = load_toolkits([multi_turn(bfcl_data_dir)])
    assert set(registry.toolkits) == set(CLASSES)
    assert registry.tool_count == 130
    for name, toolkit in registry.toolkits.items():
        writes = {op.operation_id for op in toolkit.operations.values() if op.access == "write"}
        assert writes == WRITES[name], name
        assert all(op.extensions["x-gecko-response-origin"] == "source" for op in toolkit.operations.values())
        assert isinstance(toolkit.default_state, dict)
    assert registry.toolkit("TicketAPI").default_state == {"current_user": None, "ticket_counter": 1, "ticket_queue": []}
    fs = registry.toolkit("GorillaFileSystem").default_state
    assert fs["root"] == {"/": {"type": "directory", "contents": {}}} and fs["current_directory"] == "//"
    assert registry.toolkit("MathAPI").default_state == {}


def test_rules_responses_fit_every_multi_turn_result_schema(bfcl_data_dir: Path) -> None:
    registry = load_toolkits([multi_turn(bfcl_data_dir)])
    for toolkit in registry.toolkits.values():
        for op in toolkit.operations.values():
            assert op.response_validator is not None
            value = synthesize_rules(op, {}, f"seed-{op.tool_name}")
            assert op.response_validator.is_valid(value), op.tool_name
            assert op.response_validator.is_valid({"error": "No such file"}), op.tool_name


def test_build_is_byte_identical_and_skipped_when_up_to_date(bfcl_data_dir: Path, tmp_path: Path) -> None:
    run_build(tmp_path, "--no-validate")
    for sub in (Path("bfcl/openapi/single_turn"), Path("bfcl/openapi/multi_turn"), Path("bfcl/openapi/memory")):
        left, right = bfcl_data_dir / sub, tmp_path / sub
        names = sorted(p.name for p in left.iterdir())
        assert names == sorted(p.name for p in right.iterdir())
        match, mismatch, errors = filecmp.cmpfiles(left, right, names, shallow=False)
        assert not mismatch and not errors
    again = run_build(tmp_path, "--no-validate")
    assert again.stdout.count("up to date") == 3


@pytest.mark.slow
def test_every_single_turn_toolkit_loads(bfcl_data_dir: Path) -> None:
    registry = load_toolkits([single_turn(bfcl_data_dir)])
    assert len(registry.toolkits) == 3641
    op = registry.get("multiple_0", "triangle_properties_get")
    assert op.original_name == "triangle_properties.get"
    assert op.args_validator.is_valid({"side1": 5, "side2": 4, "side3": 3})
    assert not op.args_validator.is_valid({"side1": 5, "side2": 4, "side3": 3, "colour": "red"})
